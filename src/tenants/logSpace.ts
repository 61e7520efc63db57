/*
 * What a tenant does when the log store is full (persist/storeSpace.ts).
 *
 * Its writes are refused (StoreFull: 503 TL01-9011) before anything is decided, and
 * it frees the space its own log holds: it takes a snapshot now, reads the
 * new file back to check it, and then drops every log entry that snapshot
 * covers together with the older snapshots of the tenant. That gives up
 * the point-in-time history of LOG_RETENTION_MS for this tenant (the
 * history exists to restore earlier points; when the disk budget is spent,
 * accepting writes comes first), and it is logged loudly. Once the pruned
 * pages are free the store is below its ceiling and writes resume, without
 * a restart.
 *
 * A reclaim is a whole snapshot and a read of it, so it is held back: one
 * runs per tenant at a time; after one, the next waits until the tenant has
 * logged something since (before that a snapshot would free nothing: the
 * store is full of something else, other tenants' logs or uploaded files)
 * and until RECLAIM_MIN_INTERVAL_MS has passed since it ended. Refused
 * writes meanwhile only answer 503 with Retry-After.
 */
import { runNow } from '../engine/steps.js'
import type { Storage } from '../persist/ports.js'

export interface SnapshotTaker {
  readonly tenant: string
  snapshot(): Promise<{ seq: number; file: string }>
}

const reclaiming = new WeakSet<SnapshotTaker>()
/** The last reclaim of each tenant: the sequence number its snapshot covered (-1: it failed) and when it ended. */
const lastReclaims = new WeakMap<SnapshotTaker, { seq: number; endedAtMs: number }>()

/**
 * Snapshots the tenant (whose state is at `seq`) and prunes what the snapshot covers, in the background, unless a
 * reclaim of it runs, or nothing was logged since the last one, or that one ended less than `minIntervalMs` ago.
 * Answers whether one was started.
 */
export function reclaimLogSpace(tenant: SnapshotTaker, seq: number, store: Storage, minIntervalMs: number): boolean {
  if (reclaiming.has(tenant)) return false
  const last = lastReclaims.get(tenant)
  if (last !== undefined && (seq <= last.seq || performance.now() - last.endedAtMs < minIntervalMs)) return false
  reclaiming.add(tenant)
  let coveredSeq = -1
  void (async () => {
    const snapshot = await tenant.snapshot()
    runNow(store.snapshots.readSteps(snapshot.file))
    const removed = await store.prune(tenant.tenant, snapshot.seq, Number.POSITIVE_INFINITY)
    await store.snapshots.removeOlderThan(tenant.tenant, snapshot.seq)
    coveredSeq = snapshot.seq
    console.error(
      `tenant '${tenant.tenant}': the log store is full; snapshot at seq ${snapshot.seq} taken, ${removed} log entries and the older snapshots it covers removed (point-in-time history given up)`,
    )
  })()
    .catch((error: unknown) => console.error(`tenant '${tenant.tenant}': reclaiming log space failed:`, error))
    .finally(() => {
      lastReclaims.set(tenant, { seq: coveredSeq, endedAtMs: performance.now() })
      reclaiming.delete(tenant)
    })
  return true
}
