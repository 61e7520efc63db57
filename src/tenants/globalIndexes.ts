/*
 * Indexes across tenants, kept in the GlobalDirectory (persist/ports.ts;
 * embedded: LMDB tables beside the log), for the public calls
 * that name no tenant and must not activate every tenant:
 *
 *   emails         [e-mail, tenant] → ''  for every tenant that has a live
 *                  (not trashed) user with that lower-cased e-mail
 *   confirmations  [SHA-256 of a confirmation id, tenant] → ''  for every
 *                  tenant holding that password confirmation (the public
 *                  step 1 puts the same id in each tenant with the e-mail)
 *
 * An e-mail is unique per tenant only, so one e-mail may list several
 * tenants; the tables order array keys element by element, so the range from
 * [e-mail, ''] to [e-mail, '\uffff'] reads them in tenant-name order
 * (tenant names are lower-case letters, digits and '-').
 *
 * Which resource feeds which table, the key a record is filed under and
 * whether a tenant's state holds a record under a key are the resources'
 * declarations (domain/globalFeed.ts; domain/globalFeedChanges.ts reads
 * them). The entries are maintained from what each write did: for every key
 * a record the write put, replaced or removed is or was filed under (the
 * record as it was comes from the WriteTx, the logged `del` carries only the
 * id, so an e-mail changed by `$setEmail` leaves its old address here too)
 * the tenant's entry is set or removed by asking the tenant's state after
 * the write. They are queued in the same event-loop turn as the log entry,
 * so they share its commit. The tenant's state stays the judge; the index
 * only says where to look.
 *
 * The tenant directory's markers (tenantDirectory.ts: `webhooks`) are kept
 * from the same writes, as declared too: one that turned the marker's
 * predicate for a record it wrote (a webhook made to start or stop
 * delivering; not the deliveries' own bookkeeping) has the marker say what
 * the tenant's state holds after it.
 *
 * Layout. The string key `\u0001layout` of the emails table (GLOBAL_INDEX_LAYOUT_KEY, persist/ports.ts) names the layout. A data
 * directory without it (written when the tables held `e-mail → tenant`,
 * first one wins, never forgetting) has both tables rebuilt from the
 * tenants' states at start-up (rebuildGlobalIndexesIfOld): the indexes are
 * derived data.
 */
import { DIRECTORY_MARKERS, GLOBAL_INDEX_TABLES, type DirectoryMarker } from '../domain/globalFeed.js'
import { GlobalFeeds } from '../domain/globalFeedChanges.js'
import { RESOURCES } from '../domain/resources/index.js'
import { GLOBAL_INDEX_LAYOUT, GLOBAL_INDEX_LAYOUT_KEY, LogCorruptError, type GlobalDirectory, type GlobalIndexKey, type Storage } from '../persist/ports.js'
import { recoverTenant, RecoveryError } from './recovery.js'
import { markWebhooks, tenantNames } from './tenantDirectory.js'
import { indexableEmail, normalEmail } from '../domain/values.js'
import type { TenantState } from '../engine/tenantState.js'
import type { WriteTx } from '../engine/writeTx.js'

/** What the declared resources feed to the indexes and to the directory's markers. */
const FEEDS = new GlobalFeeds(RESOURCES)

/** How each of the directory's markers is written. */
const MARK: Record<DirectoryMarker, (store: GlobalDirectory, tenant: string, on: boolean) => void> = { webhooks: markWebhooks }

/** Above every tenant name in the tables' key order. */
const AFTER_EVERY_TENANT = '\uffff'

function keyOf(name: string, tenant: string): [string, string] {
  return [name, tenant]
}

/** The parts of an entry key; null for the layout marker and for keys of the old layout (plain strings). */
function parseKey(key: GlobalIndexKey): { name: string; tenant: string } | null {
  if (!Array.isArray(key) || key.length !== 2) return null
  return { name: key[0], tenant: key[1] }
}

function tenantsUnder(table: GlobalDirectory['emails'], name: string): string[] {
  const tenants: string[] = []
  for (const key of table.getKeys({ start: [name, ''], end: [name, AFTER_EVERY_TENANT] })) {
    const parsed = parseKey(key)
    if (parsed !== null && parsed.name === name) tenants.push(parsed.tenant)
  }
  return tenants
}

/** The tenants that have a live user with this e-mail, in tenant-name order. */
function tenantsWithEmail(store: GlobalDirectory, email: string): string[] {
  const name = normalEmail(email)
  return indexableEmail(name) ? tenantsUnder(store.emails, name) : []
}

/** The tenants holding the password confirmation with this SHA-256, in tenant-name order. */
function tenantsWithConfirmation(store: GlobalDirectory, hash: string): string[] {
  return hash === '' ? [] : tenantsUnder(store.confirmations, hash)
}

/**
 * tenantsWithEmail after every write acknowledged anywhere: in cluster mode another node's write may not have reached
 * this node's copy of the index yet (GlobalDirectory.freshen reads the e-mail's entries first).
 */
export async function freshTenantsWithEmail(store: GlobalDirectory, email: string): Promise<string[]> {
  const name = normalEmail(email)
  if (indexableEmail(name)) await store.freshen?.('emails', name)
  return tenantsWithEmail(store, name)
}

/** tenantsWithConfirmation after every write acknowledged anywhere (as freshTenantsWithEmail). */
export async function freshTenantsWithConfirmation(store: GlobalDirectory, hash: string): Promise<string[]> {
  if (hash !== '') await store.freshen?.('confirmations', hash)
  return tenantsWithConfirmation(store, hash)
}

/**
 * Brings this tenant's entries up to date with a write about to be logged (tx.state is the state after it).
 * Every key write is unconditional: reads do not see writes queued but not yet committed, so skipping a
 * put because the key "is there" could lose it behind a queued remove.
 */
export function indexGlobals(store: GlobalDirectory, tenant: string, tx: WriteTx): void {
  FEEDS.forEachKeyWritten(tx, (table, name, held) => {
    if (held) void store[table].put(keyOf(name, tenant), '')
    else void store[table].remove(keyOf(name, tenant))
  })
  FEEDS.forEachMarkerTurned(tx, (marker, on) => MARK[marker](store, tenant, on))
}

/** Whether the state holds an active webhook (what the directory's `webhooks` marker says). */
export function hasActiveWebhook(state: TenantState): boolean {
  return FEEDS.markersOf(state).webhooks
}

/**
 * Makes the indexes hold what a whole state put in place at once (a restore or an import) holds for its
 * tenant: its live users' e-mails and its confirmations are added, and this tenant's entries the state does
 * not back are removed (a restore to an earlier point drops the users made since). This walks both tables
 * once, over all tenants: an operator action, not a request path.
 */
export function indexGlobalsOfState(store: GlobalDirectory, tenant: string, state: TenantState): void {
  const markers = FEEDS.markersOf(state)
  for (const marker of DIRECTORY_MARKERS) MARK[marker](store, tenant, markers[marker])
  const keys = FEEDS.keysOf(state)
  for (const table of GLOBAL_INDEX_TABLES) {
    const held = keys[table]
    for (const name of held) void store[table].put(keyOf(name, tenant), '')
    for (const key of store[table].getKeys()) {
      const parsed = parseKey(key)
      if (parsed !== null && parsed.tenant === tenant && !held.has(parsed.name)) void store[table].remove(key)
    }
  }
}

export interface IndexRebuild {
  tenants: number
  emails: number
  confirmations: number
  /** Tenants whose state could not be recovered (their entries come with the restore that reopens them). */
  skipped: string[]
}

/**
 * At start-up: when the emails table does not carry the current layout marker, both tables are rebuilt from
 * every tenant's state (its newest snapshot plus the log, one tenant in memory at a time) and replaced in one
 * transaction together with the marker, so a crash midway leaves the old tables and the next start tries
 * again. `say` hears one line about it. Null when the layout is current.
 */
export function rebuildGlobalIndexesIfOld(store: Storage, say?: (line: string) => void): IndexRebuild | null {
  if (store.emails.get(GLOBAL_INDEX_LAYOUT_KEY) === GLOBAL_INDEX_LAYOUT) return null
  const emailKeys: [string, string][] = []
  const confirmationKeys: [string, string][] = []
  const result: IndexRebuild = { tenants: 0, emails: 0, confirmations: 0, skipped: [] }
  for (const tenant of tenantNames(store)) {
    let state: TenantState
    try {
      state = recoverTenant(tenant, store).state
    } catch (error) {
      if (!(error instanceof RecoveryError) && !(error instanceof LogCorruptError)) throw error
      result.skipped.push(tenant)
      continue
    }
    result.tenants += 1
    const keys = FEEDS.keysOf(state)
    for (const email of keys.emails) emailKeys.push(keyOf(email, tenant))
    for (const hash of keys.confirmations) confirmationKeys.push(keyOf(hash, tenant))
  }
  store.replaceIndexes(emailKeys, confirmationKeys, { key: GLOBAL_INDEX_LAYOUT_KEY, value: GLOBAL_INDEX_LAYOUT })
  result.emails = emailKeys.length
  result.confirmations = confirmationKeys.length
  const skipped = result.skipped.length === 0 ? '' : `; skipped (cannot be recovered): ${result.skipped.join(', ')}`
  if (result.tenants + result.skipped.length > 0)
    say?.(`global indexes rebuilt in the current layout from ${result.tenants} tenants: ${result.emails} e-mail and ${result.confirmations} confirmation entries${skipped}`)
  return result
}
