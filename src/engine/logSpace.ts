/*
 * What a tenant does when the log store is full (storeSpace.ts).
 *
 * Its writes are refused with 503 TL01-9011 before anything is decided, and
 * it frees the space its own log holds: it takes a snapshot now, reads the
 * new file back to check it, and then drops every log entry that snapshot
 * covers together with the older snapshots of the tenant. That gives up
 * the point-in-time history of LOG_RETENTION_MS for this tenant (the
 * history exists to restore earlier points; when the disk budget is spent,
 * accepting writes comes first), and it is logged loudly. Once the pruned
 * pages are free the store is below its ceiling and writes resume, without
 * a restart. One reclaim runs per tenant at a time.
 */
import fs from 'node:fs'
import { ApiError } from '../domain/errors.js'
import type { LogStore } from '../persist/logStore.js'
import { listSnapshots, readSnapshotFile } from '../persist/snapshotFile.js'

export interface SnapshotTaker {
  readonly tenant: string
  snapshot(): Promise<{ seq: number; file: string }>
}

const reclaiming = new WeakSet<SnapshotTaker>()

export function logStoreFull(store: LogStore): ApiError {
  const limitMiB = (store.space.limitBytes / 1024 / 1024).toFixed(1)
  return new ApiError(
    'TL01-9011',
    `the engine cannot accept writes now: the log store is full (LMDB_MAP_SIZE_BYTES, ${limitMiB} MiB); space is being reclaimed, try again`,
    null,
    [],
    { 'Retry-After': '1' },
  )
}

/** Snapshots the tenant and prunes what the snapshot covers, in the background; once at a time per tenant. */
export function reclaimLogSpace(tenant: SnapshotTaker, store: LogStore, dataDir: string): void {
  if (reclaiming.has(tenant)) return
  reclaiming.add(tenant)
  void (async () => {
    const { seq, file } = await tenant.snapshot()
    readSnapshotFile(file)
    const removed = await store.prune(tenant.tenant, seq, Number.POSITIVE_INFINITY)
    for (const older of listSnapshots(dataDir, tenant.tenant)) if (older.seq < seq) await fs.promises.rm(older.file, { force: true })
    console.error(
      `tenant '${tenant.tenant}': the log store is full; snapshot at seq ${seq} taken, ${removed} log entries and the older snapshots it covers removed (point-in-time history given up)`,
    )
  })()
    .catch((error: unknown) => console.error(`tenant '${tenant.tenant}': reclaiming log space failed:`, error))
    .finally(() => reclaiming.delete(tenant))
}
