/*
 * The log entries a node holds of a prepared tenant (preparedTenant.ts):
 * kept current as this node's appends commit, as it prunes and as it
 * truncates, and read by the synchronous reads of the ports (entriesAfter,
 * entryAt: recovery's, the operator tools'). They are held raw, in
 * sequence order, and decoded when read, so that an entry that cannot be
 * decoded is refused naming it (LogCorruptError) only when someone reads
 * it. A read of entries that were never prepared (before the snapshot the
 * tenant was prepared at, without wholeLog) or were dropped after recovery
 * (forget) is a bug of the caller, not an empty answer.
 */
import { assertionFailed } from '../../assert.js'
import type { LoggedEntry } from '../../engine/logEntry.js'
import { decodeLogEntry } from '../codec.js'
import { LogCorruptError } from '../ports.js'
import type { PreparedTenant } from './preparedTenant.js'

/** An append at `seq` committed: its number joins the runs, its bytes the entries held when they are the newest. */
export function noteAppended(prepared: PreparedTenant, seq: number, bytes: Buffer): void {
  prepared.runs.add(seq)
  const entries = prepared.entries
  if (entries !== null && seq > (entries.seqs.at(-1) ?? entries.after)) {
    entries.seqs.push(seq)
    entries.bytes.push(bytes)
  }
}

/** The entries up to `upto` were pruned. */
export function notePruned(prepared: PreparedTenant, upto: number): void {
  prepared.runs.removeUpTo(upto)
  const entries = prepared.entries
  if (entries !== null) {
    const drop = entries.seqs.findIndex((seq) => seq > upto)
    const count = drop < 0 ? entries.seqs.length : drop
    entries.seqs.splice(0, count)
    entries.bytes.splice(0, count)
    entries.after = Math.max(entries.after, upto)
  }
}

/** The entries after `afterSeq` were truncated. */
export function noteTruncated(prepared: PreparedTenant, afterSeq: number): void {
  prepared.runs.removeAfter(afterSeq)
  const entries = prepared.entries
  if (entries !== null) {
    const keep = entries.seqs.findIndex((seq) => seq > afterSeq)
    if (keep >= 0) {
      entries.seqs.length = keep
      entries.bytes.length = keep
    }
  }
}

/** The held entries after `afterSeq` up to `uptoSeq`, decoded. */
export function* heldEntriesAfter(tenant: string, prepared: PreparedTenant, afterSeq: number, uptoSeq: number): IterableIterator<{ seq: number; entry: LoggedEntry }> {
  const entries = heldEntries(tenant, prepared, afterSeq)
  for (let at = firstAbove(entries.seqs, afterSeq); at < entries.seqs.length; at += 1) {
    const seq = entries.seqs[at] as number
    if (seq > uptoSeq) return
    yield { seq, entry: decoded(tenant, seq, entries.bytes[at] as Buffer) }
  }
}

/** The held entry `seq`, decoded; undefined when the log has none. */
export function heldEntryAt(tenant: string, prepared: PreparedTenant, seq: number): LoggedEntry | undefined {
  if (!prepared.runs.has(seq)) return undefined
  const entries = heldEntries(tenant, prepared, seq - 1)
  const at = firstAbove(entries.seqs, seq - 1)
  return entries.seqs[at] === seq ? decoded(tenant, seq, entries.bytes[at] as Buffer) : undefined
}

/** The prepared entries, when they hold every entry after `afterSeq`. */
function heldEntries(tenant: string, prepared: PreparedTenant, afterSeq: number): { seqs: number[]; bytes: Buffer[] } {
  const entries = prepared.entries
  if (entries === null) assertionFailed(`tenant '${tenant}': its log entries were forgotten after recovery; prepare it again to read them`)
  if (afterSeq < entries.after && prepared.runs.count > 0 && prepared.runs.first <= entries.after) {
    assertionFailed(`tenant '${tenant}': only the entries after ${entries.after} were prepared; prepare it with wholeLog to read from ${afterSeq + 1}`)
  }
  return entries
}

function firstAbove(seqs: readonly number[], seq: number): number {
  let low = 0
  let high = seqs.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((seqs[middle] as number) <= seq) low = middle + 1
    else high = middle
  }
  return low
}

/** A stored entry's bytes decoded; LogCorruptError, naming it, when they cannot be. */
export function decoded(tenant: string, seq: number, bytes: Buffer): LoggedEntry {
  try {
    return decodeLogEntry(bytes)
  } catch (error) {
    throw new LogCorruptError(tenant, seq, error)
  }
}
