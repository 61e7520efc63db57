/*
 * What a resource feeds outside its tenant, as its declaration says it
 * (ResourceDecl.globalIndex, ResourceDecl.directoryMarker), so that the
 * tenant layer that keeps these facts (tenants/globalIndexes.ts) reads the
 * declarations and names no resource:
 *
 *   a global index     a table of the directory of global facts (the port's
 *                      GlobalDirectory) listing, per key, the tenants that
 *                      hold a record under it, for the public calls that name
 *                      no tenant (a live user's e-mail, a pending password
 *                      confirmation's hash). The declaration says the key a
 *                      record is filed under and whether a tenant's state
 *                      holds a record under a key: the state stays the judge.
 *   a directory marker a flag of the tenant's directory row saying whether the
 *                      tenant holds any record the declared predicate is true
 *                      of (an active webhook: the deliverer loads only the
 *                      tenants marked).
 *
 * globalFeedChanges.ts reads these declarations for a write and for a whole
 * state; domain/resources/index.ts checks at load that each table and each
 * marker is fed by exactly one resource.
 */
import type { Rec } from './record.js'
import type { StateView } from './tx.js'

/** The directory's global-index tables a resource may feed (persist/ports.ts names the same). */
export const GLOBAL_INDEX_TABLES = ['emails', 'confirmations'] as const
export type GlobalIndexTable = (typeof GLOBAL_INDEX_TABLES)[number]

/** The flags of a tenant's directory row a resource may set (tenants/tenantDirectory.ts keeps the row). */
export const DIRECTORY_MARKERS = ['webhooks'] as const
export type DirectoryMarker = (typeof DIRECTORY_MARKERS)[number]

export interface GlobalIndexFeed {
  readonly table: GlobalIndexTable
  /** The key the record is filed under, whether or not the state holds it now; null when it has none (no e-mail). */
  readonly keyOf: (rec: Rec) => string | null
  /** Whether the state holds a record under the key (a live user with this e-mail). */
  readonly heldIn: (state: StateView, key: string) => boolean
}

export interface DirectoryMarkerFeed {
  readonly marker: DirectoryMarker
  /** Whether this record sets the marker (a webhook that delivers). */
  readonly sets: (rec: Rec) => boolean
}
