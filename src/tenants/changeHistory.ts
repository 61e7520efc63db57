/*
 * Reading a tenant's changes from its log newest first: the history of an
 * object and of the tenant (domain/history.ts) over what the log still
 * holds (entries are pruned past LOG_RETENTION_MS once a snapshot covers
 * them).
 *
 * The log is read through its port (TenantLog.readEntries, forward only,
 * from the store itself: cluster mode keeps no copy in memory) in windows
 * of HISTORY_SLICE_ENTRIES going back from the newest entry handed out by
 * the change feed (so nothing that is not durable shows), each window's
 * changes visited newest first. Between two windows the scan yields to the
 * event loop (setImmediate), so a long scan lets every other request and
 * tenant through; and one scan reads at most `maxEntries` entries, then
 * stops and says where to go on (`before`), so that a request's cost is
 * bounded however big the log and however rare the object's changes.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Change } from '../domain/changes.js'
import { changesOfEntry } from '../engine/changesOfEntry.js'
import type { TenantLog } from '../persist/ports.js'

/** Log entries read (and decoded) per window before the scan yields to the event loop. */
const HISTORY_SLICE_ENTRIES = 512

/** Log entries one history answer reads at most; past it, the answer says where to go on. */
const HISTORY_SCAN_MAX_ENTRIES = 50_000

/** The oldest entry the log holds: from when history is available (null: it holds none). */
interface HistoryStart {
  readonly seq: number
  readonly atMs: number
}

/** What a scan did: where the next page goes on (null: the log holds nothing older), and from when history is available. */
export interface HistoryScan {
  readonly before: number | null
  readonly availableFrom: HistoryStart | null
}

/**
 * Visits the changes of the entries before `before` (null: from the newest, `newestSeq`) newest first, the
 * changes of one entry from its last operation to its first. `visitEntry` gets each entry's changes (possibly
 * none) in that order and answers true to stop after that entry; the scan then answers `before` = that entry's
 * seq, so the next page starts with the entry before it.
 */
export async function scanChangesNewestFirst(
  log: TenantLog,
  tenant: string,
  newestSeq: number,
  before: number | null,
  visitEntry: (changes: readonly Change[]) => boolean,
  maxEntries = HISTORY_SCAN_MAX_ENTRIES,
): Promise<HistoryScan> {
  const firstSeq = log.firstSeq(tenant)
  const availableFrom = await startOf(log, tenant, firstSeq)
  let upto = Math.min(newestSeq, before === null ? newestSeq : before - 1)
  let read = 0
  while (upto >= firstSeq && upto > 0) {
    if (read >= maxEntries) return { before: upto + 1, availableFrom }
    const from = Math.max(firstSeq, upto - Math.min(HISTORY_SLICE_ENTRIES, maxEntries - read) + 1)
    const entries = await log.readEntries(tenant, from - 1, upto - from + 1)
    read += upto - from + 1
    for (let index = entries.length - 1; index >= 0; index -= 1) {
      const { seq, entry } = entries[index] as (typeof entries)[number]
      if (seq > upto) continue
      if (visitEntry(changesOfEntry(seq, entry).reverse())) return { before: seq, availableFrom }
    }
    upto = from - 1
    await nextTurn()
  }
  return { before: null, availableFrom }
}

async function startOf(log: TenantLog, tenant: string, firstSeq: number): Promise<HistoryStart | null> {
  if (firstSeq <= 0) return null
  const [first] = await log.readEntries(tenant, firstSeq - 1, 1)
  return first === undefined ? null : { seq: first.seq, atMs: first.entry.at }
}
