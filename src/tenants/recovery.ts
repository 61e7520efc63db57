/*
 * Rebuilding a tenant from disk: the newest snapshot that passes its checks,
 * then every log entry after it, in order. A snapshot that fails its checks
 * is skipped for the one before it: listed in the report, and told to the
 * snapshot store's SnapshotFaults (a line on stderr with the tenant, the file and the
 * reason, and the count /metrics shows). A log entry
 * that cannot be decoded (LogCorruptError), one that decodes but cannot be
 * applied to the state before it (DamagedEntryError: e.g. it deletes a record
 * that is not there), or a gap in the sequence, stops the recovery of this
 * tenant with an error naming the tenant and the sequence number.
 *
 * The work is written once, as steps (engine/steps.ts) of a millisecond or
 * less: it pauses after each slice of the snapshot read and decoded
 * (SnapshotStore.readSteps: 256 KB of a format 6 file's arrays), every
 * SLICE_UNITS records loaded or entries replayed, after each chunk of rows
 * of a table's columns taken and its ids indexed (ColumnTable.restoreSteps),
 * of each pass of an index built for the loaded records
 * (Collection.finishLoadSteps: INDEX_STEP_RECORDS rows) and of the counts
 * the aggregates take from the columns (StateObserver.takeLoadedSteps), and
 * after each index of the snapshot's records is trimmed
 * (Collection.trimSteps), and likewise for the records the log's entries
 * added, which wait for their indexes and for the report totals and
 * counters too (TenantState.applyEntry, finishReplaySteps; shown to them
 * during the replay whenever UNSEEN_ROWS_MAX wait). It is
 * run two ways: `recoverTenant` runs it to the end at once (the CLI, tests),
 * and `recoverTenantInTurns` runs it a turn's budget at a time (4 ms of
 * steps, then the event loop goes on), so a server activating or rebuilding
 * a large tenant keeps serving the others meanwhile.
 */
import { findResourceByType } from '../domain/resources/index.js'
import type { Rec } from '../domain/schema.js'
import { runInTurns, runNow, type Steps } from '../engine/steps.js'
import { TenantState } from '../engine/tenantState.js'
import type { FrozenTable } from '../engine/frozenTable.js'
import { SnapshotInvalidError, type SnapshotBody, type SnapshotSource, type Storage } from '../persist/ports.js'

export interface RecoveryReport {
  snapshotSeq: number
  snapshotFile: string | null
  replayedEntries: number
  skippedSnapshots: { file: string; reason: string }[]
  durationMs: number
}

export class RecoveryError extends Error {}

/** A log entry that decodes but cannot be applied: the log is damaged at `seq` as surely as an undecodable entry. */
export class DamagedEntryError extends RecoveryError {
  override name = 'DamagedEntryError'
  constructor(
    readonly tenant: string,
    readonly seq: number,
    cause: unknown,
  ) {
    super(`tenant '${tenant}': log entry ${seq} cannot be applied (${cause instanceof Error ? cause.message : String(cause)})`)
  }
}

/** Records loaded or entries replayed between two pauses (about a millisecond: engine/steps.ts). */
const SLICE_UNITS = 100
/** … and between two progress reports. */
const PROGRESS_UNITS = 10_000

/**
 * Records the replayed entries inserted that the observers may not have seen (TenantState.applyEntry) before the
 * replay pauses to show them: the most an operation other than an insert shows them at once, in its slice.
 */
const UNSEEN_ROWS_MAX = 16_384

/** The name under which a snapshot keeps the report totals (persist/snapshotFile.ts: derived state). */
const REPORT_TOTALS = 'reportTotals'

function checkType(type: string): void {
  if (findResourceByType(type) === undefined) throw new RecoveryError(`snapshot holds unknown resource type ${type}`)
}

/**
 * Loads the collections stored as records first, the smallest first (the account's time zone before the time
 * records), then those stored as columns (format 6: the tenant's texts first, then each table's arrays taken as they
 * are: TenantState.restoreSteps); each collection is indexed once its rows are in, and the report totals the snapshot
 * keeps are taken (or rebuilt when they do not fit: ReportAggregates.installSteps). `onProgress` hears the records
 * loaded so far, every PROGRESS_UNITS (after each table) and at the end.
 */
function* loadSteps(state: TenantState, body: SnapshotBody, onProgress?: (recordsDone: number) => void): Steps<void> {
  const storedTotals = body.derived?.[REPORT_TOTALS]
  if (storedTotals !== undefined) state.reports.expectStored()
  if (body.columns !== undefined) yield* state.restorePoolSteps(body.columns.pool)
  let loaded = 0
  for (const [type, recs] of Object.entries(body.collections).sort(([, a], [, b]) => a.length - b.length)) {
    checkType(type)
    for (const rec of recs) {
      state.load(type, rec as Rec)
      loaded += 1
      if (loaded % PROGRESS_UNITS === 0) onProgress?.(loaded)
      if (loaded % SLICE_UNITS === 0) yield
    }
  }
  if (body.columns !== undefined) {
    for (const table of body.columns.tables) {
      checkType(table.type)
      loaded += yield* state.restoreSteps(table, SLICE_UNITS)
      onProgress?.(loaded)
      yield
    }
    yield* state.finishRestoreSteps()
  }
  for (const collection of state.collections.values()) {
    yield* collection.finishLoadSteps()
    yield* collection.trimSteps()
  }
  if (storedTotals !== undefined) yield* state.reports.installSteps(storedTotals)
  onProgress?.(loaded)
}

export function loadSnapshotBody(state: TenantState, body: SnapshotBody, onProgress?: (recordsDone: number) => void): void {
  runNow(loadSteps(state, body, onProgress))
}

export function loadSnapshotBodyInTurns(state: TenantState, body: SnapshotBody, onProgress?: (recordsDone: number) => void): Promise<void> {
  return runInTurns(loadSteps(state, body, onProgress))
}

/**
 * What a snapshot of the state keeps, taken now, for a writer that reads it a slice per event-loop turn while the
 * tenant goes on: each collection frozen as it is (Collection.frozen: taking it copies no record; a write after it
 * copies the chunk of columns it changes, once), the tenant's texts their codes name (a copy of the pool's list), and
 * the report totals unless they wait for a rebuild (frozen likewise, a page of days at a time: dayTotals.ts). `release` once written (or failed).
 */
export function snapshotSourceOf(state: TenantState): { source: SnapshotSource; release: () => void } {
  const frozen: FrozenTable[] = []
  const collections: Record<string, FrozenTable> = {}
  for (const [type, collection] of state.collections) {
    if (collection.size === 0) continue
    const table = collection.frozen()
    frozen.push(table)
    collections[type] = table
  }
  const reportTotals = state.reports.frozenStored()
  const pool = state.pool.image()
  const source: SnapshotSource = reportTotals === null ? { collections, pool } : { collections, pool, derived: { [REPORT_TOTALS]: reportTotals.parts } }
  return {
    source,
    release: () => {
      for (const table of frozen) table.release()
      reportTotals?.release()
    },
  }
}

/** What a snapshot of the state keeps, taken now: the records, and the report totals unless they wait for a rebuild. */
export function snapshotBodyOf(state: TenantState): SnapshotBody {
  const collections: Record<string, Rec[]> = {}
  for (const [type, collection] of state.collections) if (collection.size > 0) collections[type] = [...collection.values()]
  const reportTotals = state.reports.stored()
  return reportTotals === null ? { collections } : { collections, derived: { [REPORT_TOTALS]: reportTotals } }
}

export interface RecoveryOptions {
  /** Rebuild up to this sequence number (everything logged, by default). */
  uptoSeq?: number
  /** Log entries replayed so far. */
  onProgress?: (done: number) => void
  /** Snapshot records loaded so far. */
  onLoad?: (recordsDone: number) => void
}

export interface Recovered {
  state: TenantState
  report: RecoveryReport
}

/*
 * `dataDir` is the data directory `store` was opened on: the snapshots come from `store.snapshots` (ports.ts). It
 * is kept in the signature for the callers that name it (the tests); drop it when they may change.
 */

/** Rebuilds the tenant at once. */
export function recoverTenant(tenant: string, store: Storage, options: RecoveryOptions = {}): Recovered {
  return runNow(recoverSteps(tenant, store, options))
}

/** Rebuilds the tenant a turn's budget of steps at a time (engine/steps.ts runInTurns). */
export function recoverTenantInTurns(tenant: string, store: Storage, options: RecoveryOptions = {}): Promise<Recovered> {
  return runInTurns(recoverSteps(tenant, store, options))
}

function* recoverSteps(tenant: string, store: Storage, options: RecoveryOptions): Steps<Recovered> {
  const started = performance.now()
  const uptoSeq = options.uptoSeq ?? Number.MAX_SAFE_INTEGER
  const skippedSnapshots: RecoveryReport['skippedSnapshots'] = []
  let state = new TenantState(tenant)
  let snapshotFile: string | null = null
  for (const listing of store.snapshots.list(tenant)) {
    if (listing.seq > uptoSeq) continue
    try {
      const { header, body } = yield* store.snapshots.readSteps(listing.file)
      if (header.tenant !== tenant || header.seq !== listing.seq) throw new SnapshotInvalidError('header does not match the file name')
      state = new TenantState(tenant)
      yield* loadSteps(state, body, options.onLoad)
      state.seq = header.seq
      snapshotFile = listing.file
      store.snapshots.noteChecked(listing.file, null)
      break
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      skippedSnapshots.push({ file: listing.file, reason })
      store.snapshots.noteChecked(listing.file, reason)
      store.snapshots.faults.note(tenant, listing.file, reason, 'skipped')
      state = new TenantState(tenant)
    }
  }
  const snapshotSeq = state.seq
  let replayedEntries = 0
  for (const { seq, entry } of store.entriesAfter(tenant, snapshotSeq, uptoSeq)) {
    if (seq !== state.seq + 1) {
      throw new RecoveryError(`tenant '${tenant}': log entry ${state.seq + 1} is missing (next is ${seq}); no snapshot covers the gap`)
    }
    try {
      state.applyEntry(seq, entry)
    } catch (error) {
      throw new DamagedEntryError(tenant, seq, error)
    }
    replayedEntries += 1
    if (replayedEntries % PROGRESS_UNITS === 0) options.onProgress?.(replayedEntries)
    if (replayedEntries % SLICE_UNITS === 0) {
      yield
      if (state.unseenRows >= UNSEEN_ROWS_MAX) yield* state.seeInsertedSteps()
    }
  }
  // The records the entries added wait for the observers and to be indexed (TenantState.applyEntry).
  yield* state.finishReplaySteps()
  return {
    state,
    report: { snapshotSeq, snapshotFile, replayedEntries, skippedSnapshots, durationMs: performance.now() - started },
  }
}
