/*
 * A range index for a date field: rows grouped in buckets of one UTC day
 * (each a row set: rowSet.ts), with the bucket keys kept sorted. Inserting
 * is O(1) for a new record (plus a binary insertion when a new day
 * appears); a range read visits only the days it overlaps; an ordered read
 * walks the days in order and sorts one day at a time, so "the newest 100"
 * of a million records touches a few days only. Rows whose date is null
 * are kept apart: first ascending, last descending, as $orderby puts them.
 *
 * A row is placed by the date its column holds: the collection takes a row
 * out before it writes a new date, and puts it back after (collection.ts).
 */
import type { Rec } from '../domain/schema.js'
import { assertionFailed } from '../assert.js'
import { RowSet } from './rowSet.js'
import type { Steps } from './steps.js'

const DAY_MS = 86_400_000
/** The widest spread of days addAllSteps sorts by counting (its counts are an array of one slot a day). */
const BULK_DAYS_MAX = 1 << 20

export interface DateRange {
  low?: number
  lowInclusive: boolean
  high?: number
  highInclusive: boolean
}

/** The UTC day of a date; null for none. */
function dayOf(value: number | null): number | null {
  return value === null ? null : Math.floor(value / DAY_MS)
}

export class DateBuckets {
  private readonly buckets = new Map<number, RowSet>()
  /** Sorted bucket keys (day numbers). */
  private readonly days: number[] = []
  /** Rows whose date is null. */
  private readonly nulls = new RowSet()

  /** `dateOf` reads the field's date of a row (null for none); `recordOf` makes a row's record (`walk`). */
  constructor(
    readonly field: string,
    private readonly dateOf: (row: number) => number | null,
    private readonly recordOf: (row: number) => Rec,
  ) {}

  /**
   * Adds `rows` (loaded: ascending, each after every row held) as steps of `stepRows` rows, as a counting sort: each
   * row's day read, the rows of each day counted, then written in order into one array whose parts the days take
   * (RowSet.takeRows: a view, no copy), instead of a bucket looked up and pushed to per row. Dates spread over more
   * than BULK_DAYS_MAX days are added a row at a time.
   */
  *addAllSteps(rows: Int32Array, stepRows: number): Steps<void> {
    const days = new Float64Array(rows.length)
    let earliest = Number.POSITIVE_INFINITY
    let latest = Number.NEGATIVE_INFINITY
    for (let at = 0; at < rows.length; at += 1) {
      const day = dayOf(this.dateOf(rows[at] as number)) ?? Number.NaN
      days[at] = day
      if (day < earliest) earliest = day
      if (day > latest) latest = day
      if ((at + 1) % stepRows === 0 || at + 1 === rows.length) yield
    }
    if (latest - earliest >= BULK_DAYS_MAX) {
      for (let at = 0; at < rows.length; at += 1) {
        this.add(rows[at] as number)
        if ((at + 1) % stepRows === 0) yield
      }
      return
    }
    // Slot 0 counts the rows without a date, slot 1 + day - earliest those of a day.
    const span = latest >= earliest ? latest - earliest + 1 : 0
    const starts = new Int32Array(span + 2)
    for (const day of days) {
      const slot = Number.isNaN(day) ? 1 : day - earliest + 2
      starts[slot] = (starts[slot] as number) + 1
    }
    for (let slot = 1; slot < starts.length; slot += 1) starts[slot] = (starts[slot] as number) + (starts[slot - 1] as number)
    const next = starts.slice(0, span + 1)
    const sorted = new Int32Array(rows.length)
    for (let at = 0; at < rows.length; at += 1) {
      const day = days[at] as number
      const slot = Number.isNaN(day) ? 0 : day - earliest + 1
      const position = next[slot] as number
      sorted[position] = rows[at] as number
      next[slot] = position + 1
      if ((at + 1) % stepRows === 0 || at + 1 === rows.length) yield
    }
    if ((starts[1] as number) > 0) this.nulls.takeRows(sorted.subarray(0, starts[1]))
    for (let slot = 1; slot <= span; slot += 1) {
      const from = starts[slot] as number
      const to = starts[slot + 1] as number
      if (from === to) continue
      const day = earliest + slot - 1
      let set = this.buckets.get(day)
      if (set === undefined) {
        set = new RowSet(0)
        this.buckets.set(day, set)
        this.days.splice(this.insertionPoint(day), 0, day)
      }
      set.takeRows(sorted.subarray(from, to))
    }
    this.assertDaysListed()
  }

  /** Trims the days' row sets. */
  trim(): void {
    for (const set of this.buckets.values()) set.trim()
    this.nulls.trim()
  }

  add(row: number): void {
    const day = dayOf(this.dateOf(row))
    if (day === null) {
      this.nulls.add(row)
      return
    }
    let set = this.buckets.get(day)
    if (set === undefined) {
      set = new RowSet()
      this.buckets.set(day, set)
      this.days.splice(this.insertionPoint(day), 0, day)
      this.assertDaysListed()
    }
    set.add(row)
  }

  remove(row: number): void {
    const day = dayOf(this.dateOf(row))
    if (day === null) {
      this.nulls.remove(row)
      return
    }
    const set = this.buckets.get(day)
    // A row leaves before its date changes (Collection.put): its day's bucket holds it.
    if (set === undefined) assertionFailed(`DateBuckets ${this.field}: row ${row} removed from day ${day}, which has no rows`)
    set.remove(row)
    if (set.size === 0) {
      this.buckets.delete(day)
      this.days.splice(this.insertionPoint(day), 1)
      this.assertDaysListed()
    }
  }

  /** Each bucket's day is listed once in `days` (checked as a day comes or goes). */
  private assertDaysListed(): void {
    if (this.days.length !== this.buckets.size) assertionFailed(`DateBuckets ${this.field}: ${this.days.length} days listed, ${this.buckets.size} buckets`)
  }

  /** Whether a row moves to another bucket when its date changes from `before` to `after`. */
  static moves(before: number | null, after: number | null): boolean {
    return dayOf(before) !== dayOf(after)
  }

  private insertionPoint(day: number): number {
    let low = 0
    let high = this.days.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if ((this.days[middle] as number) < day) low = middle + 1
      else high = middle
    }
    return low
  }

  /** How many rows the range may hold (whole days counted): the planner's estimate. */
  estimate(range: DateRange): number {
    let total = 0
    for (const day of this.daysIn(range, false)) total += this.buckets.get(day)?.size ?? 0
    return total
  }

  private *daysIn(range: DateRange, descending: boolean): IterableIterator<number> {
    const first = range.low === undefined ? 0 : this.insertionPoint(Math.floor(range.low / DAY_MS))
    const lastDay = range.high === undefined ? Number.POSITIVE_INFINITY : Math.floor(range.high / DAY_MS)
    let last = this.days.length - 1
    while (last >= first && (this.days[last] as number) > lastDay) last -= 1
    if (descending) for (let index = last; index >= first; index -= 1) yield this.days[index] as number
    else for (let index = first; index <= last; index += 1) yield this.days[index] as number
  }

  /**
   * Rows in the range, day by day; with `order`, each day's rows are sorted
   * by it, so the whole walk is in order (nulls first ascending, last
   * descending; nulls are only visited when the range is unbounded).
   */
  *walkRows(range: DateRange, descending: boolean, order?: (a: number, b: number) => number): IterableIterator<number> {
    const unbounded = range.low === undefined && range.high === undefined
    if (unbounded && !descending) yield* this.inOrder(this.nulls, order)
    for (const day of this.daysIn(range, descending)) yield* this.inOrder(this.buckets.get(day) as RowSet, order)
    if (unbounded && descending) yield* this.inOrder(this.nulls, order)
  }

  /** walkRows' records (made from the rows as they are reached). */
  *walk(range: DateRange, descending: boolean, order?: (a: Rec, b: Rec) => number): IterableIterator<Rec> {
    const rowOrder = order === undefined ? undefined : (a: number, b: number) => order(this.recordOf(a), this.recordOf(b))
    for (const row of this.walkRows(range, descending, rowOrder)) yield this.recordOf(row)
  }

  /** The rows, sorted by `order` when given (a copy: the bucket stays ascending). */
  private inOrder(set: RowSet, order?: (a: number, b: number) => number): IterableIterator<number> {
    return order === undefined ? set.values() : set.toArray().sort(order).values()
  }
}
