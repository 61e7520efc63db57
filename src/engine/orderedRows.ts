/*
 * The rows of one index key, readable in the order of a date field, then
 * id (a null date first, as $orderby puts nulls), so that a list pinned to
 * the key and sorted by that field reads its page from one end instead of
 * sorting every record of the key.
 *
 * A key's rows are kept ascending (rowSet.ts) until the first ordered
 * read. Loading a snapshot, replaying the log and writing records nobody
 * lists in order therefore cost what they cost in an index without an
 * order. The first ordered read sorts the rows (`inDateOrder`) and from
 * then on they stay in order: a set of no more than
 * SORT_ON_READ_MAX_RECORDS, so that read holds the event loop for tens of
 * milliseconds at most. A larger key is not read in order until then (the
 * planner walks the date's range index instead, which suits a key that
 * holds much of the collection).
 *
 * In order, the rows are one Int32Array: a row is found by a binary search
 * over (date, id) read from the columns, and inserting or removing moves
 * the rows after it (4 bytes each). New time records mostly come last,
 * where an insert is a push. A row's date must be the one it was placed
 * by when it is removed: the collection takes a row out of its keys
 * before it writes the row's new values (collection.ts).
 */
import { assertionFailed } from '../assert.js'
import { DONE, RowSet, RowWalk } from './rowSet.js'

/** The most rows the first ordered read sorts (about 30 ms on the benchmark VM). */
const SORT_ON_READ_MAX_RECORDS = 65_536

/** What the order reads of a row: its date (null: -Infinity) and how its id compares with another's. */
export interface RowOrder {
  date(row: number): number
  compareIds(a: number, b: number): number
}

/** Negative, zero or positive as row `a` comes before, with or after row `b` in date order, then id. */
function compareRows(order: RowOrder, a: number, b: number): number {
  const x = order.date(a)
  const y = order.date(b)
  return x !== y ? (x < y ? -1 : 1) : order.compareIds(a, b)
}

/** Bits of a sort key that hold the row's position; the rest hold its date. */
const POSITION_BITS = 22n
/** The widest span of dates (in ms, plus one for null) whose keys fit beside the position in 64 bits: about 139 years. */
const DATE_SPAN_MAX_MS = 2 ** 42 - 2

/**
 * The rows sorted by date, then id. Each row's date and position are packed
 * into one 64-bit integer, so the sort is the engine's numeric sort of a
 * BigUint64Array rather than a comparator reading columns per step (on
 * 20,000 time records: 6 ms against 76). Equal dates are then put in id
 * order. Dates spread over more than DATE_SPAN_MAX_MS are sorted by a
 * comparator.
 */
function inDateOrder(rows: Int32Array, order: RowOrder): Int32Array {
  if (rows.length >= 2 ** Number(POSITION_BITS)) assertionFailed(`inDateOrder: ${rows.length} rows do not fit the sort key`)
  const dates = new Float64Array(rows.length)
  let earliest = Number.POSITIVE_INFINITY
  let latest = Number.NEGATIVE_INFINITY
  for (let at = 0; at < rows.length; at += 1) {
    const date = order.date(rows[at] as number)
    dates[at] = date
    if (date === Number.NEGATIVE_INFINITY) continue
    if (date < earliest) earliest = date
    if (date > latest) latest = date
  }
  if (latest - earliest > DATE_SPAN_MAX_MS) return rows.slice().sort((a, b) => compareRows(order, a, b))
  const keys = new BigUint64Array(rows.length)
  for (let at = 0; at < rows.length; at += 1) {
    const date = dates[at] as number
    const offset = date === Number.NEGATIVE_INFINITY ? 0 : date - earliest + 1
    keys[at] = (BigInt(offset) << POSITION_BITS) | BigInt(at)
  }
  keys.sort()
  const positionMask = (1n << POSITION_BITS) - 1n
  const sorted = new Int32Array(rows.length)
  for (let at = 0; at < rows.length; at += 1) sorted[at] = rows[Number((keys[at] as bigint) & positionMask)] as number
  // Runs of equal dates came in the order of their positions: put each in id order.
  for (let from = 0; from < sorted.length; ) {
    const date = order.date(sorted[from] as number)
    let to = from + 1
    while (to < sorted.length && order.date(sorted[to] as number) === date) to += 1
    if (to - from > 1) sorted.subarray(from, to).sort((a, b) => order.compareIds(a, b))
    from = to
  }
  return sorted
}

export class OrderedRows {
  /** The rows ascending, until the first ordered read (null from then on). */
  private unordered: RowSet | null = new RowSet()
  /** The rows in date order, once read in order. */
  private rows: Int32Array<ArrayBufferLike> = new Int32Array(0)
  private count = 0

  constructor(
    private readonly order: RowOrder,
    private readonly sortOnReadMaxRecords = SORT_ON_READ_MAX_RECORDS,
  ) {}

  get size(): number {
    return this.unordered === null ? this.count : this.unordered.size
  }

  add(row: number): void {
    if (this.unordered !== null) {
      this.unordered.add(row)
      return
    }
    const at = this.place(row)
    if (at < this.count && this.rows[at] === row) assertionFailed(`OrderedRows: row ${row} added twice`)
    if (this.count === this.rows.length) {
      const grown = new Int32Array(Math.max(4, this.rows.length * 2))
      grown.set(this.rows)
      this.rows = grown
    }
    this.rows.copyWithin(at + 1, at, this.count)
    this.rows[at] = row
    this.count += 1
  }

  /** Removes `row`, placed by the date it has now. */
  remove(row: number): void {
    if (this.unordered !== null) {
      this.unordered.remove(row)
      return
    }
    const at = this.place(row)
    if (at >= this.count || this.rows[at] !== row) assertionFailed(`OrderedRows: row ${row} is not held in its place`)
    this.rows.copyWithin(at, at + 1, this.count)
    this.count -= 1
  }

  /** Rows kept ascending take them at once (RowSet.takeRows); rows in order place each. */
  takeRows(rows: Int32Array): void {
    if (this.unordered !== null) this.unordered.takeRows(rows)
    else for (const row of rows) this.add(row)
  }

  /** Rows kept ascending are trimmed; rows in order stay as they are. */
  trim(): void {
    this.unordered?.trim()
  }

  /** Every row, in no promised order. */
  values(): IterableIterator<number> {
    return this.unordered === null ? new RowWalk(this.rows, this.count) : this.unordered.values()
  }

  /**
   * Every row in the order of `$orderby=<field>`, or with `descending` of
   * `$orderby=<field> desc`: last to first, except that rows with the same
   * date come by id ascending, as every sort breaks its ties. Null when the
   * rows are not in order yet and too many to sort now.
   */
  inOrder(descending: boolean): IterableIterator<number> | null {
    if (this.unordered !== null) {
      if (this.unordered.size > this.sortOnReadMaxRecords) return null
      this.rows = inDateOrder(this.unordered.toArray(), this.order)
      this.count = this.rows.length
      this.unordered = null
    }
    return descending ? new DescendingWalk(this.rows, this.count, this.order) : new RowWalk(this.rows, this.count)
  }

  /** The first position whose row does not come before `row`. */
  private place(row: number): number {
    let low = 0
    let high = this.count
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compareRows(this.order, this.rows[middle] as number, row) < 0) low = middle + 1
      else high = middle
    }
    return low
  }
}

/**
 * Rows in date order from last to first, except that a run of rows with
 * the same date comes in its own (id ascending) order. An iterator object
 * rather than a generator (a generator cost about 125 ns a record of a
 * list page). A row whose predecessor has another date is given at once;
 * a run of equal dates is found backwards and given from its start. Each
 * row's date is read once: the date of the row before a run is the date
 * of the next step's last row.
 */
class DescendingWalk implements IterableIterator<number> {
  /** The next position back to look at. */
  private at: number
  /** The date of the row at `at` (read when the step before looked past its run). */
  private atDate: number
  /** A run being given: positions [runFrom, runTo), the next at runNext. */
  private runNext = 0
  private runTo = 0
  private readonly result = { done: false, value: 0 }

  constructor(
    private readonly rows: Int32Array,
    count: number,
    private readonly order: RowOrder,
  ) {
    this.at = count - 1
    this.atDate = count > 0 ? order.date(rows[count - 1] as number) : 0
  }

  [Symbol.iterator](): IterableIterator<number> {
    return this
  }

  next(): IteratorResult<number> {
    if (this.runNext < this.runTo) {
      this.result.value = this.rows[this.runNext] as number
      this.runNext += 1
      return this.result
    }
    const last = this.at
    if (last < 0) return DONE
    const { rows, order } = this
    const date = this.atDate
    let first = last
    let before = first > 0 ? order.date(rows[first - 1] as number) : 0
    while (first > 0 && before === date) {
      first -= 1
      before = first > 0 ? order.date(rows[first - 1] as number) : 0
    }
    this.at = first - 1
    this.atDate = before
    this.runNext = first + 1
    this.runTo = last + 1
    this.result.value = rows[first] as number
    return this.result
  }
}
