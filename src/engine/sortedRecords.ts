/*
 * The records of one index key, readable in the order of a date field,
 * then id (a null date first, as $orderby puts nulls), so that a list
 * pinned to the key and sorted by that field reads its page from one end
 * instead of sorting every record of the key.
 *
 * A key's records are kept as added (addedRecords.ts) until the first
 * ordered read. Loading a snapshot, replaying the log and writing records
 * nobody lists in order therefore cost what they cost in an index without
 * an order. The first ordered read sorts the records (`inDateOrder`) and
 * from then on they stay in order: a set of no more than
 * SORT_ON_READ_MAX_RECORDS, so that read holds the event loop for tens of
 * milliseconds at most. A larger key is not read in order until then (the
 * planner walks the date's range index instead, which suits a key that
 * holds much of the collection).
 *
 * In order, the records sit in chunks of at most CHUNK_MAX_RECORDS: a
 * record is found by a binary search over the chunks' last records, then
 * inside its chunk. Inserting or removing moves at most a chunk's entries
 * (a full chunk splits in two; an empty one goes), so a key of a million
 * records costs what a key of a thousand does. New time records mostly
 * come last, where an insert is a push.
 */
import { assertionFailed } from '../assert.js'
import type { Rec } from '../domain/schema.js'
import type { RecordSet } from './postingIndex.js'
import { AddedRecords } from './addedRecords.js'
import { SlotWalk } from './recordTable.js'

/** The most records a chunk holds; one more splits it in two. */
export const CHUNK_MAX_RECORDS = 512
/** The most records the first ordered read sorts (about 30 ms on the benchmark VM). */
export const SORT_ON_READ_MAX_RECORDS = 65_536

/** A record's place in the order: its date (null first), then its id. */
function sortValue(rec: Rec, field: string): number {
  const value = rec[field]
  return typeof value === 'number' ? value : Number.NEGATIVE_INFINITY
}

function compareIds(a: Rec, b: Rec): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** Negative, zero or positive as `a` comes before, with or after `b` in the order of `field`, then id. */
function compareByDate(a: Rec, b: Rec, field: string): number {
  const x = sortValue(a, field)
  const y = sortValue(b, field)
  return x !== y ? (x < y ? -1 : 1) : compareIds(a, b)
}

/** Bits of a sort key that hold the record's position; the rest hold its date. */
const POSITION_BITS = 22n
/** The widest span of dates (in ms, plus one for null) whose keys fit beside the position in 64 bits: about 139 years. */
const DATE_SPAN_MAX_MS = 2 ** 42 - 2

/**
 * The records sorted by date, then id. Each record's date and position are
 * packed into one 64-bit integer, so the sort is the engine's numeric sort
 * of a BigUint64Array rather than a comparator reading two records per
 * step (on 20,000 time records: 6 ms against 76). Equal dates are then put
 * in id order. Dates spread over more than DATE_SPAN_MAX_MS are sorted by a
 * comparator.
 */
export function inDateOrder(recs: readonly Rec[], field: string): Rec[] {
  if (recs.length >= 2 ** Number(POSITION_BITS)) assertionFailed(`inDateOrder: ${recs.length} records do not fit the sort key`)
  const dates = new Float64Array(recs.length)
  let earliest = Number.POSITIVE_INFINITY
  let latest = Number.NEGATIVE_INFINITY
  for (let at = 0; at < recs.length; at += 1) {
    const date = sortValue(recs[at] as Rec, field)
    dates[at] = date
    if (date === Number.NEGATIVE_INFINITY) continue
    if (date < earliest) earliest = date
    if (date > latest) latest = date
  }
  if (latest - earliest > DATE_SPAN_MAX_MS) {
    return [...recs].sort((a, b) => compareByDate(a, b, field))
  }
  const keys = new BigUint64Array(recs.length)
  for (let at = 0; at < recs.length; at += 1) {
    const date = dates[at] as number
    const offset = date === Number.NEGATIVE_INFINITY ? 0 : date - earliest + 1
    keys[at] = (BigInt(offset) << POSITION_BITS) | BigInt(at)
  }
  keys.sort()
  const positionMask = (1n << POSITION_BITS) - 1n
  const sorted = new Array<Rec>(recs.length)
  for (let at = 0; at < recs.length; at += 1) sorted[at] = recs[Number((keys[at] as bigint) & positionMask)] as Rec
  // Runs of equal dates came in the order of their positions: put each in id order.
  for (let from = 0; from < sorted.length; ) {
    const date = sortValue(sorted[from] as Rec, field)
    let to = from + 1
    while (to < sorted.length && sortValue(sorted[to] as Rec, field) === date) to += 1
    if (to - from > 1) {
      const run = sorted.slice(from, to).sort(compareIds)
      for (let at = from; at < to; at += 1) sorted[at] = run[at - from] as Rec
    }
    from = to
  }
  return sorted
}

export class SortedRecords implements RecordSet {
  /** The records as added, until the first ordered read (null from then on). */
  private added: AddedRecords | null = new AddedRecords()
  /** The records in order, once read in order. */
  private chunks: Rec[][] = []
  private count = 0

  constructor(
    readonly field: string,
    private readonly chunkMaxRecords = CHUNK_MAX_RECORDS,
    private readonly sortOnReadMaxRecords = SORT_ON_READ_MAX_RECORDS,
  ) {}

  get size(): number {
    return this.added === null ? this.count : this.added.size
  }

  add(rec: Rec): void {
    if (this.added !== null) {
      this.added.add(rec)
      return
    }
    if (this.chunks.length === 0) this.chunks.push([rec])
    else {
      const { chunk, at } = this.place(rec)
      const held = this.chunks[chunk] as Rec[]
      if (held[at]?.id === rec.id) assertionFailed(`SortedRecords: ${rec.id} added twice`)
      held.splice(at, 0, rec)
      if (held.length > this.chunkMaxRecords) this.chunks.splice(chunk + 1, 0, held.splice(held.length >>> 1))
    }
    this.count += 1
  }

  /** Adds many records the key does not hold yet; while the records are kept as added, that may be `recs` itself. */
  addBulk(recs: Rec[]): void {
    if (this.added !== null) this.added.addBulk(recs)
    else for (const rec of recs) this.add(rec)
  }

  /** Removes `rec`, the very object the key holds. */
  remove(rec: Rec): void {
    if (this.added !== null) {
      this.added.remove(rec)
      return
    }
    const { chunk, at } = this.heldPlace(rec, 'remove')
    const held = this.chunks[chunk] as Rec[]
    held.splice(at, 1)
    if (held.length === 0) this.chunks.splice(chunk, 1)
    this.count -= 1
  }

  /** Puts `after` in the place of `before`, a former version of the same record that the key holds. */
  replace(before: Rec, after: Rec): void {
    if (this.added !== null) this.added.replace(before, after)
    else if (sortValue(before, this.field) !== sortValue(after, this.field)) {
      this.remove(before)
      this.add(after)
    } else {
      const { chunk, at } = this.heldPlace(before, 'replace')
      ;(this.chunks[chunk] as Rec[])[at] = after
    }
  }

  /** Records kept as added are trimmed (RecordSet.trim); chunks in order stay as they are. */
  trim(): void {
    this.added?.trim()
  }

  /** Every record, in no promised order. */
  values(): Iterable<Rec> {
    return this.added === null ? this.ascending() : this.added.values()
  }

  /**
   * Every record in the order of `$orderby=<field>`, or with `descending`
   * of `$orderby=<field> desc`: last to first, except that records with
   * the same date come by id ascending, as every sort breaks its ties.
   * Null when the records are not in order yet and too many to sort now.
   */
  inOrder(descending: boolean): Iterable<Rec> | null {
    if (this.added !== null) {
      if (this.added.size > this.sortOnReadMaxRecords) return null
      const sorted = inDateOrder([...this.added.values()], this.field)
      this.added = null
      this.count = sorted.length
      for (let from = 0; from < sorted.length; from += this.chunkMaxRecords) this.chunks.push(sorted.slice(from, from + this.chunkMaxRecords))
    }
    return descending ? this.descending() : this.ascending()
  }

  private ascending(): IterableIterator<Rec> {
    return new SlotWalk(this.chunks)
  }

  private descending(): IterableIterator<Rec> {
    return new DescendingWalk(this.chunks, this.field)
  }

  /** Where `rec` is or would go: the first chunk whose last record is not before it (the last chunk if none), and the first place in it not before it. */
  private place(rec: Rec): { chunk: number; at: number } {
    let low = 0
    let high = this.chunks.length - 1
    while (low < high) {
      const middle = (low + high) >>> 1
      const chunk = this.chunks[middle] as Rec[]
      if (compareByDate(chunk[chunk.length - 1] as Rec, rec, this.field) < 0) low = middle + 1
      else high = middle
    }
    const held = this.chunks[low] as Rec[]
    let first = 0
    let last = held.length
    while (first < last) {
      const middle = (first + last) >>> 1
      if (compareByDate(held[middle] as Rec, rec, this.field) < 0) first = middle + 1
      else last = middle
    }
    return { chunk: low, at: first }
  }

  /** The place of `rec`, which the key must hold (the same object). */
  private heldPlace(rec: Rec, use: string): { chunk: number; at: number } {
    if (this.chunks.length === 0) assertionFailed(`SortedRecords.${use}: ${rec.id} is not held`)
    const found = this.place(rec)
    if ((this.chunks[found.chunk] as Rec[])[found.at] !== rec) assertionFailed(`SortedRecords.${use}: ${rec.id} is not held in its place as this version`)
    return found
  }
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined }

/**
 * The records of sorted chunks from last to first, except that a run of
 * records with the same date comes in its own (id ascending) order. An
 * iterator object rather than a generator, as SlotWalk (recordTable.ts):
 * the generator took 10 % of a list page's CPU in-process, about 125 ns
 * a record. A record whose predecessor has another date is given at once;
 * a run of equal dates is gathered backwards into `run` and given from
 * its end.
 */
class DescendingWalk implements IterableIterator<Rec> {
  /** Where the walk is: the chunk, and the position in it of the next record back (-1: the chunk is done). */
  private chunk: number
  private at: number
  /** A run of equal dates, last record first; its first `runLeft` entries are still to give, from the end. */
  private readonly run: Rec[] = []
  private runLeft = 0

  constructor(
    private readonly chunks: readonly Rec[][],
    private readonly field: string,
  ) {
    this.chunk = chunks.length - 1
    this.at = (chunks[this.chunk]?.length ?? 0) - 1
  }

  [Symbol.iterator](): IterableIterator<Rec> {
    return this
  }

  next(): IteratorResult<Rec> {
    if (this.runLeft > 0) {
      this.runLeft -= 1
      return { done: false, value: this.run[this.runLeft] as Rec }
    }
    const rec = this.take()
    if (rec === undefined) return DONE
    const date = sortValue(rec, this.field)
    let before = this.peek()
    if (before === undefined || sortValue(before, this.field) !== date) return { done: false, value: rec }
    this.run.length = 0
    this.run.push(rec)
    while (before !== undefined && sortValue(before, this.field) === date) {
      this.run.push(this.take() as Rec)
      before = this.peek()
    }
    this.runLeft = this.run.length - 1
    return { done: false, value: this.run[this.runLeft] as Rec }
  }

  /** The next record back, without moving; undefined before the first. */
  private peek(): Rec | undefined {
    if (this.at < 0) this.toChunkBefore()
    return this.chunk < 0 ? undefined : (this.chunks[this.chunk] as Rec[])[this.at]
  }

  /** The next record back, moving past it; undefined before the first. */
  private take(): Rec | undefined {
    const rec = this.peek()
    if (rec !== undefined) this.at -= 1
    return rec
  }

  /** Moves to the last record of the chunk before (chunks are never empty). */
  private toChunkBefore(): void {
    this.chunk -= 1
    this.at = this.chunk < 0 ? 0 : (this.chunks[this.chunk] as Rec[]).length - 1
  }
}
