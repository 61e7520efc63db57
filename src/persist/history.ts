/*
 * What a tenant's past looks like on disk, and which points of it a restore
 * can reach.
 *
 * A point is a sequence number: the state after that log entry. Its time is
 * the entry's `at` (when the write was decided); a snapshot that no log entry
 * matches (written by a restore or an import: it starts a new line of the
 * log) has the time it was taken.
 *
 * A point p is reachable when some snapshot s <= p (or the empty tenant, when
 * the log starts at 1) plus the log entries s+1..p without a gap rebuild it.
 * So for each contiguous run of log entries a..b, the reachable points run
 * from the lowest base in a-1..b up to b; a snapshot outside every run is a
 * reachable point of its own. Snapshot headers are read here; their bodies
 * are checked when a restore loads them (recoverTenant falls back to an older
 * one, and the restore then reports a gap if no base is left).
 *
 * For a time T the restore point is the last point at or before T: within a
 * run, entries are in time order (each is decided after the one before), so
 * a binary search finds it. Only the entries at range ends and on the search
 * path are decoded; one that cannot be decoded shows its time as unknown,
 * and a restore that has to replay it stops with an error naming it.
 */
import { LogCorruptError, RestorePointError, type Storage, type TenantLog } from './ports.js'

interface SnapshotPoint {
  seq: number
  /** When it was taken; null when its header cannot be read. */
  at: number | null
  bytes: number
  file: string
  problem: string | null
}

export interface SeqRange {
  fromSeq: number
  toSeq: number
  /** Times of the first and last point; null when that entry cannot be decoded (a restore there fails, naming it). */
  fromAt: number | null
  toAt: number | null
}

export interface TenantHistory {
  tenant: string
  /** Newest first. */
  snapshots: SnapshotPoint[]
  /** Contiguous runs of log entries, oldest first. */
  logRanges: SeqRange[]
  /** The points a restore can reach, oldest first. */
  reachable: SeqRange[]
}

/** A point outside the reachable history (the CLI and the admin endpoint answer it as a clear error). */
function logRuns(store: TenantLog, tenant: string): { fromSeq: number; toSeq: number }[] {
  const runs: { fromSeq: number; toSeq: number }[] = []
  let current: { fromSeq: number; toSeq: number } | undefined
  for (const seq of store.seqs(tenant)) {
    if (current !== undefined && seq === current.toSeq + 1) current.toSeq = seq
    else {
      current = { fromSeq: seq, toSeq: seq }
      runs.push(current)
    }
  }
  return runs
}

export function readHistory(tenant: string, store: Storage): TenantHistory {
  const snapshots: SnapshotPoint[] = store.snapshots.list(tenant).map((listing) => {
    try {
      const header = store.snapshots.readHeader(listing.file)
      const problem = header.tenant === tenant && header.seq === listing.seq ? null : 'header does not match the file name'
      return { seq: listing.seq, at: header.at, bytes: listing.bytes, file: listing.file, problem }
    } catch (error) {
      return { seq: listing.seq, at: null, bytes: listing.bytes, file: listing.file, problem: error instanceof Error ? error.message : String(error) }
    }
  })
  const bases = snapshots.filter((snapshot) => snapshot.problem === null)
  const pointAt = (seq: number): number | null => {
    try {
      return store.entryAt(tenant, seq)?.at ?? bases.find((snapshot) => snapshot.seq === seq)?.at ?? null
    } catch (error) {
      if (error instanceof LogCorruptError) return null
      throw error
    }
  }
  const range = (fromSeq: number, toSeq: number): SeqRange => ({ fromSeq, toSeq, fromAt: pointAt(fromSeq), toAt: pointAt(toSeq) })
  const runs = logRuns(store, tenant)
  const reachable: SeqRange[] = []
  for (const run of runs) {
    const starts = bases.filter((snapshot) => snapshot.seq >= run.fromSeq - 1 && snapshot.seq <= run.toSeq).map((snapshot) => snapshot.seq)
    if (run.fromSeq === 1) starts.push(1)
    if (starts.length > 0) reachable.push(range(Math.min(...starts), run.toSeq))
  }
  for (const snapshot of bases) {
    if (!runs.some((run) => snapshot.seq >= run.fromSeq - 1 && snapshot.seq <= run.toSeq)) reachable.push(range(snapshot.seq, snapshot.seq))
  }
  reachable.sort((a, b) => a.fromSeq - b.fromSeq)
  return { tenant, snapshots, logRanges: runs.map((run) => range(run.fromSeq, run.toSeq)), reachable }
}

const timeText = (at: number | null): string => (at === null ? '(time unknown: entry damaged)' : new Date(at).toISOString())

export function describeRange(range: SeqRange): string {
  const seqs = range.fromSeq === range.toSeq ? `seq ${range.fromSeq}` : `seq ${range.fromSeq}..${range.toSeq}`
  return `${seqs} (${timeText(range.fromAt)} .. ${timeText(range.toAt)})`
}

function reachableText(history: TenantHistory): string {
  return history.reachable.length === 0 ? 'nothing is reachable' : `reachable: ${history.reachable.map(describeRange).join(', ')}`
}

export function checkReachable(history: TenantHistory, seq: number): number {
  if (!history.reachable.some((range) => seq >= range.fromSeq && seq <= range.toSeq)) {
    throw new RestorePointError(`tenant '${history.tenant}': seq ${seq} cannot be restored; ${reachableText(history)}`)
  }
  return seq
}

/** The last reachable point at or before `atMs`. */
export function seqAtTime(history: TenantHistory, store: TenantLog, atMs: number): number {
  let best: { seq: number; at: number } | undefined
  for (const range of history.reachable) {
    if (range.fromAt === null || range.fromAt > atMs) continue
    // Binary search for the last entry at or before atMs; the range's first point is known to qualify.
    let low = range.fromSeq
    let high = range.toSeq
    while (low < high) {
      const middle = Math.ceil((low + high) / 2)
      const at = store.entryAt(history.tenant, middle)?.at ?? Number.POSITIVE_INFINITY
      if (at <= atMs) low = middle
      else high = middle - 1
    }
    const at = low === range.fromSeq ? range.fromAt : (store.entryAt(history.tenant, low)?.at ?? range.fromAt)
    if (best === undefined || at > best.at || (at === best.at && low > best.seq)) best = { seq: low, at }
  }
  if (best === undefined) {
    throw new RestorePointError(`tenant '${history.tenant}': nothing reachable at or before ${new Date(atMs).toISOString()}; ${reachableText(history)}`)
  }
  return best.seq
}

/** About how many log entries a rebuild up to `uptoSeq` replays: from the newest snapshot at or before it (for progress). */
export function entriesToReplay(tenant: string, store: Storage, uptoSeq = store.lastSeq(tenant)): number {
  return Math.max(0, uptoSeq - (store.snapshots.list(tenant).find((listing) => listing.seq <= uptoSeq)?.seq ?? 0))
}
