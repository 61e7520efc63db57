/*
 * A range index for a date field: records grouped in buckets of one UTC
 * day (a PostingIndex by day, so it holds the record objects and a put
 * replaces a record's former version: `replace`), with the bucket keys
 * kept sorted. Inserting is O(1) (plus a binary
 * insertion when a new day appears); a range read visits only the days it
 * overlaps; an ordered read walks the days in order and sorts one day at a
 * time, so "the newest 100" of a million records touches a few days only.
 * Records whose field is null are kept apart: first ascending, last
 * descending, as $orderby puts them.
 */
import type { Rec } from '../domain/schema.js'
import { AddedRecords } from './addedRecords.js'
import { PostingIndex } from './postingIndex.js'
import { RecordTable } from './recordTable.js'

const DAY_MS = 86_400_000

export interface DateRange {
  low?: number
  lowInclusive: boolean
  high?: number
  highInclusive: boolean
}

/** The UTC day of a date value; null for anything else (a null date). */
function dayOf(value: unknown): number | null {
  return typeof value === 'number' ? Math.floor(value / DAY_MS) : null
}

export class DateBuckets {
  private readonly buckets = new PostingIndex<number, AddedRecords>(() => new AddedRecords())
  /** Sorted bucket keys (day numbers). */
  private readonly days: number[] = []
  /** Records whose field is null, by id. */
  private readonly nulls = new RecordTable()

  constructor(readonly field: string) {}

  /** Adds many records at once (loading a snapshot): cheaper than one add each. */
  addAll(recs: readonly Rec[]): void {
    for (const rec of recs) if (dayOf(rec[this.field]) === null) this.nulls.set(rec)
    this.buckets.addAll(recs, (rec) => dayOf(rec[this.field]), (day) => this.days.splice(this.insertionPoint(day), 0, day))
  }

  /** Trims the days' record sets (RecordSet.trim). */
  trim(): void {
    this.buckets.trim()
  }

  add(rec: Rec): void {
    const day = dayOf(rec[this.field])
    if (day === null) this.nulls.set(rec)
    else if (this.buckets.add(day, rec)) this.days.splice(this.insertionPoint(day), 0, day)
  }

  remove(rec: Rec): void {
    const day = dayOf(rec[this.field])
    if (day === null) this.nulls.delete(rec.id)
    else if (this.buckets.remove(day, rec)) this.days.splice(this.insertionPoint(day), 1)
  }

  /** Puts `after` in the place of `before`, a former version of the same record (in its day's place when the day is the same). */
  replace(before: Rec, after: Rec): void {
    const day = dayOf(after[this.field])
    if (day !== dayOf(before[this.field])) {
      this.remove(before)
      this.add(after)
    } else if (day === null) this.nulls.set(after)
    else this.buckets.replace(day, before, after)
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

  /** How many records the range may hold (whole days counted): the planner's estimate. */
  estimate(range: DateRange): number {
    let total = 0
    for (const day of this.daysIn(range, false)) total += this.buckets.count(day)
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
   * Records in the range, day by day; with `order`, each day's records are
   * sorted by it, so the whole walk is in order (nulls first ascending, last
   * descending; nulls are only visited when the range is unbounded).
   */
  *walk(range: DateRange, descending: boolean, order?: (a: Rec, b: Rec) => number): IterableIterator<Rec> {
    const unbounded = range.low === undefined && range.high === undefined
    if (unbounded && !descending) yield* this.inOrder(this.nulls.values(), order)
    for (const day of this.daysIn(range, descending)) yield* this.inOrder(this.buckets.records(day), order)
    if (unbounded && descending) yield* this.inOrder(this.nulls.values(), order)
  }

  /** The records, sorted by `order` when given (a copy: the bucket stays in its order). */
  private inOrder(recs: Iterable<Rec>, order?: (a: Rec, b: Rec) => number): Iterable<Rec> {
    return order === undefined ? recs : [...recs].sort(order)
  }
}
