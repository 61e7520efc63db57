/*
 * Making a whole state a tenant's current one on disk (a restore, an
 * import): it is written as a snapshot with the next free sequence number,
 * above every logged entry and every snapshot of the tenant, so nothing of
 * the history is overwritten and recovery (newest snapshot + the log after
 * it) loads exactly this state. The log continues after it; the entries
 * below it stay for other restores until retention prunes them. Then the
 * e-mail and confirmation indexes learn the state's users and confirmations
 * and forget this tenant's entries the state no longer holds, and the tenant
 * directory gets its row if it had none. The snapshot is written first: a
 * crash before it leaves the tenant as it was.
 */
import { hasActiveWebhook, indexGlobalsOfState } from './globalIndexes.js'
import type { TenantState } from '../engine/tenantState.js'
import type { Storage } from '../persist/ports.js'
import { snapshotSourceOf } from './recovery.js'
import { installRow } from './tenantDirectory.js'

export interface InstalledState {
  /** The sequence number the state now has; the next write gets the one after. */
  seq: number
  file: string
  /** When the snapshot was taken. */
  at: number
  bytes: number
  objects: number
  /** The tenant's highest sequence number before (entries up to it stay in the history). */
  previousLastSeq: number
}

export function objectCount(state: TenantState): number {
  let objects = 0
  for (const collection of state.collections.values()) objects += collection.size
  return objects
}

/** Sets `state.seq` to the new sequence number; `onProgress` hears the records encoded so far. */
export async function installState(state: TenantState, store: Storage, options: { createdAt?: number; onProgress?: (recordsDone: number) => void } = {}): Promise<InstalledState> {
  const tenant = state.tenant
  await store.flushed()
  const previousLastSeq = Math.max(store.lastSeq(tenant), ...store.snapshots.list(tenant).map((listing) => listing.seq))
  const seq = previousLastSeq + 1
  const at = Date.now()
  const { source, release } = snapshotSourceOf(state)
  let written: { file: string; bytes: number }
  try {
    written = await store.snapshots.write(tenant, seq, at, source, options.onProgress)
  } finally {
    release()
  }
  const { file, bytes } = written
  state.seq = seq
  indexGlobalsOfState(store, tenant, state)
  installRow(store, tenant, options.createdAt ?? Date.now(), hasActiveWebhook(state))
  await store.flushed()
  return { seq, file, at, bytes, objects: objectCount(state), previousLastSeq }
}
