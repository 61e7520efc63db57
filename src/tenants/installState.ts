/*
 * Making a whole state a tenant's current one on disk (a restore, an
 * import, a rename), in two steps:
 *
 *   prepareInstall  writes the state as a snapshot at no sequence number yet
 *                   (SnapshotStore.writeUnplaced: a file the listing does
 *                   not take), a slice per event-loop turn, while the tenant
 *                   serves on: this is the long part (seconds for a million
 *                   records);
 *   install         places it at the next free sequence number, above every
 *                   logged entry and every snapshot of the tenant (a header
 *                   and a rename), so nothing of the history is overwritten
 *                   and recovery (newest snapshot + the log after it) loads
 *                   exactly this state. The log continues after it; the
 *                   entries below it stay for other restores until retention
 *                   prunes them. Then the e-mail and confirmation indexes
 *                   learn the state's users and confirmations and forget this
 *                   tenant's entries the state no longer holds, and the
 *                   tenant directory gets its row if it had none.
 *
 * An online restore runs only `install` while it holds the tenant
 * (onlineRestore.ts), so the tenant's requests wait for a rename, not for a
 * snapshot write. Why that is as safe as writing the snapshot in the job:
 * the sequence number is chosen inside the job, after the log is flushed
 * and while no write of the tenant can land, so it is above everything
 * logged; the snapshot's body was fsynced before, and its header (the only
 * part that names the sequence number: snapshotHeader.ts leaves it room of
 * the same size for any) is fsynced before the rename, and the folder after
 * it, all before `install` resolves. So a crash before the rename leaves
 * the tenant as it was (the unplaced file is removed by its next pruning),
 * a crash after it recovers the restored state whole, and every write
 * acknowledged after the restore's answer is logged after that sequence
 * number and replayed on top of it. The state must not change between the
 * two steps (a restore's rebuilt state is in no one's hands meanwhile).
 */
import { hasActiveWebhook, indexGlobalsOfState } from './globalIndexes.js'
import type { TenantState } from '../engine/tenantState.js'
import type { Storage, UnplacedSnapshot } from '../persist/ports.js'
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

/** A state's snapshot written ahead, to be made current by `install` (see the top). */
export interface PreparedInstall {
  /** Sets `state.seq` to the new sequence number; short (see the top). */
  install(): Promise<InstalledState>
  /** Gives the written snapshot up (nothing is installed after it). */
  discard(): Promise<void>
}

/** The first step (see the top); `onProgress` hears the records encoded so far. */
export async function prepareInstall(state: TenantState, store: Storage, options: { createdAt?: number; onProgress?: (recordsDone: number) => void } = {}): Promise<PreparedInstall> {
  const tenant = state.tenant
  const at = Date.now()
  const { source, release } = snapshotSourceOf(state)
  let unplaced: UnplacedSnapshot
  try {
    unplaced = await store.snapshots.writeUnplaced(tenant, at, source, options.onProgress)
  } finally {
    release()
  }
  return {
    install: async () => {
      await store.flushed()
      const previousLastSeq = Math.max(store.lastSeq(tenant), ...store.snapshots.list(tenant).map((listing) => listing.seq))
      const seq = previousLastSeq + 1
      const { file, bytes } = await unplaced.place(seq)
      state.seq = seq
      indexGlobalsOfState(store, tenant, state)
      installRow(store, tenant, options.createdAt ?? Date.now(), hasActiveWebhook(state))
      await store.flushed()
      return { seq, file, at, bytes, objects: objectCount(state), previousLastSeq }
    },
    discard: () => unplaced.discard(),
  }
}

/** Both steps at once (the offline CLI, an import, a rename); sets `state.seq` to the new sequence number. */
export async function installState(state: TenantState, store: Storage, options: { createdAt?: number; onProgress?: (recordsDone: number) => void } = {}): Promise<InstalledState> {
  const prepared = await prepareInstall(state, store, options)
  try {
    return await prepared.install()
  } finally {
    await prepared.discard()
  }
}
