/*
 * Rebuilding a tenant from disk: the newest snapshot that passes its checks,
 * then every log entry after it, in order. A snapshot that fails its checks
 * is skipped for the one before it (reported through `onSkip`). A log entry
 * that cannot be decoded, or a gap in the sequence, stops the recovery of
 * this tenant with an error naming the tenant and the sequence number.
 */
import { findResourceByType } from '../domain/resources/index.js'
import type { Rec } from '../domain/schema.js'
import { TenantState } from '../engine/tenantState.js'
import type { LogStore } from './logStore.js'
import { listSnapshots, readSnapshotFile, type SnapshotBody } from './snapshotFile.js'

export interface RecoveryReport {
  snapshotSeq: number
  snapshotFile: string | null
  replayedEntries: number
  skippedSnapshots: { file: string; reason: string }[]
  durationMs: number
}

export class RecoveryError extends Error {}

const PROGRESS_EVERY = 10_000

/**
 * Loads the smallest collections first: the users and projects that big collections refer to are there to share
 * their ids. `onProgress` hears the records loaded so far, every PROGRESS_EVERY and at the end.
 */
export function loadSnapshotBody(state: TenantState, body: SnapshotBody, onProgress?: (recordsDone: number) => void): void {
  let loaded = 0
  for (const [type, recs] of Object.entries(body.collections).sort(([, a], [, b]) => a.length - b.length)) {
    if (findResourceByType(type) === undefined) throw new RecoveryError(`snapshot holds unknown resource type ${type}`)
    for (const rec of recs) {
      state.load(type, rec as Rec)
      loaded += 1
      if (onProgress !== undefined && loaded % PROGRESS_EVERY === 0) onProgress(loaded)
    }
  }
  onProgress?.(loaded)
}

export function snapshotBodyOf(state: TenantState): SnapshotBody {
  const collections: Record<string, Rec[]> = {}
  for (const [type, collection] of state.collections) if (collection.size > 0) collections[type] = [...collection.values()]
  return { collections }
}

/** Rebuilds the tenant up to `uptoSeq` (everything logged, by default). */
export function recoverTenant(
  tenant: string,
  dataDir: string,
  store: LogStore,
  options: { uptoSeq?: number; onProgress?: (done: number) => void; onLoad?: (recordsDone: number) => void } = {},
): { state: TenantState; report: RecoveryReport } {
  const started = performance.now()
  const uptoSeq = options.uptoSeq ?? Number.MAX_SAFE_INTEGER
  const skippedSnapshots: RecoveryReport['skippedSnapshots'] = []
  let state = new TenantState(tenant)
  let snapshotFile: string | null = null
  for (const listing of listSnapshots(dataDir, tenant)) {
    if (listing.seq > uptoSeq) continue
    try {
      const { header, body } = readSnapshotFile(listing.file)
      if (header.tenant !== tenant || header.seq !== listing.seq) throw new Error('header does not match the file name')
      state = new TenantState(tenant)
      loadSnapshotBody(state, body, options.onLoad)
      state.seq = header.seq
      snapshotFile = listing.file
      break
    } catch (error) {
      skippedSnapshots.push({ file: listing.file, reason: error instanceof Error ? error.message : String(error) })
      state = new TenantState(tenant)
    }
  }
  const snapshotSeq = state.seq
  let replayedEntries = 0
  for (const { seq, entry } of store.entriesAfter(tenant, snapshotSeq, uptoSeq)) {
    if (seq !== state.seq + 1) {
      throw new RecoveryError(`tenant '${tenant}': log entry ${state.seq + 1} is missing (next is ${seq}); no snapshot covers the gap`)
    }
    state.applyEntry(seq, entry)
    replayedEntries += 1
    if (options.onProgress !== undefined && replayedEntries % PROGRESS_EVERY === 0) options.onProgress(replayedEntries)
  }
  return {
    state,
    report: { snapshotSeq, snapshotFile, replayedEntries, skippedSnapshots, durationMs: performance.now() - started },
  }
}
