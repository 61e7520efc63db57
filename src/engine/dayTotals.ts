/*
 * Totals per local day, kept in pages of typed arrays.
 *
 * A report adds up the days of its periods for every group (500 projects ×
 * 31 days for a month grouped by project). Kept as a Map of day → object,
 * every day read was a hash lookup and a pointer chase into a heap of a
 * million records: memory latency, not arithmetic, set the report's time.
 * Here the days of a group live in pages of PAGE_DAYS consecutive days, one
 * Float64Array per page holding the five sums of each day side by side, so a
 * month is one or two page lookups and a sequential read.
 *
 * Sums stay exact: counts, milliseconds and cents are integers, far below
 * 2^53. A page whose days hold no record any more is dropped, so memory
 * follows the days that have records. Records without a start are kept
 * apart (the no-day bucket) and count only for a period without bounds.
 *
 * A snapshot keeps the totals (`stored`, read back by `fromStored`): only
 * the days that hold records, in day order, as the bytes of an Int32Array
 * of day numbers and a Float64Array of their sums, so the same totals
 * always store the same bytes. A page is 2.5 KB whether one of its days
 * holds records or all 64 do: 500 projects over three years are 25 MB of
 * pages, and their 100,000 records hold 4 MB of days.
 *
 * A snapshot written while the tenant goes on takes the totals at one
 * moment without copying them (`frozen`): the frozen view keeps the pages
 * as they are then, and a write that changes a page a frozen view holds
 * changes a copy of it instead (copy on write, a page at a time, as the
 * columns' chunks: columnTable.ts). Putting every day of a million
 * records' totals side by side took 36-134 ms in one piece; the view
 * does it a group at a time, as the writer asks.
 */

import { assert } from '../assert.js'
import { emptyTotals, type Totals, type TotalsByDay } from '../domain/totals.js'

export { emptyTotals, type Totals }

function addInto(target: Totals, source: Totals, sign = 1): void {
  target.count += sign * source.count
  target.timeMs += sign * source.timeMs
  target.billableTimeMs += sign * source.billableTimeMs
  target.effectiveTimeMs += sign * source.effectiveTimeMs
  target.moneyCents += sign * source.moneyCents
}

/** The day key of records without a start: counted only when a period has no bounds. */
export const NO_DAY = -1_000_000_000

const PAGE_DAYS = 64
/** Slots per day: count, timeMs, billableTimeMs, effectiveTimeMs, moneyCents. */
const SLOTS = 5
const COUNT = 0
const TIME_MS = 1
const BILLABLE_TIME_MS = 2
const EFFECTIVE_TIME_MS = 3
const MONEY_CENTS = 4

interface Page {
  readonly sums: Float64Array
  /** Records counted on the page's days; the page is dropped at 0. */
  records: number
  /** Frozen views that hold this page (FrozenDays): it is copied before it is changed. */
  frozen: number
}

function emptyPage(): Page {
  return { sums: new Float64Array(PAGE_DAYS * SLOTS), records: 0, frozen: 0 }
}

/** Days and sums of `pages` and the no-day bucket as a snapshot keeps them (see the top). */
function storedOf(pages: ReadonlyMap<number, Page>, noDay: Totals): StoredDays {
  const pageNumbers = [...pages.keys()].sort((a, b) => a - b)
  let heldDays = 0
  for (const pageNumber of pageNumbers) {
    const pageSums = (pages.get(pageNumber) as Page).sums
    for (let offset = COUNT; offset < pageSums.length; offset += SLOTS) if (pageSums[offset] !== 0) heldDays += 1
  }
  const days = new Int32Array(heldDays)
  const sums = new Float64Array(heldDays * SLOTS)
  let at = 0
  for (const pageNumber of pageNumbers) {
    const pageSums = (pages.get(pageNumber) as Page).sums
    for (let index = 0; index < PAGE_DAYS; index += 1) {
      const from = index * SLOTS
      if (pageSums[from + COUNT] === 0) continue
      days[at] = pageNumber * PAGE_DAYS + index
      for (let slot = 0; slot < SLOTS; slot += 1) sums[at * SLOTS + slot] = pageSums[from + slot] as number
      at += 1
    }
  }
  const { count, timeMs, billableTimeMs, effectiveTimeMs, moneyCents } = noDay
  return { noDay: [count, timeMs, billableTimeMs, effectiveTimeMs, moneyCents], days: new Uint8Array(days.buffer), sums: new Uint8Array(sums.buffer) }
}

/** DayTotals as they were when frozen (see the top); `release` once read, so that writes stop copying pages. */
export class FrozenDays {
  private released = false

  constructor(
    private readonly pages: ReadonlyMap<number, Page>,
    private readonly noDay: Totals,
  ) {
    for (const page of pages.values()) page.frozen += 1
  }

  /** The totals as a snapshot keeps them (DayTotals.stored), as they were when frozen. */
  stored(): StoredDays {
    assert(!this.released, 'frozen day totals read after their release')
    return storedOf(this.pages, this.noDay)
  }

  release(): void {
    if (this.released) return
    this.released = true
    for (const page of this.pages.values()) page.frozen -= 1
  }
}

function addSlots(sums: Float64Array, offset: number, totals: Totals, sign: number): void {
  sums[offset + COUNT] = (sums[offset + COUNT] as number) + sign * totals.count
  sums[offset + TIME_MS] = (sums[offset + TIME_MS] as number) + sign * totals.timeMs
  sums[offset + BILLABLE_TIME_MS] = (sums[offset + BILLABLE_TIME_MS] as number) + sign * totals.billableTimeMs
  sums[offset + EFFECTIVE_TIME_MS] = (sums[offset + EFFECTIVE_TIME_MS] as number) + sign * totals.effectiveTimeMs
  sums[offset + MONEY_CENTS] = (sums[offset + MONEY_CENTS] as number) + sign * totals.moneyCents
}

/** Adds the days [fromIndex, toIndex) of a page into `into`. */
function sumSlots(sums: Float64Array, fromIndex: number, toIndex: number, into: Totals): void {
  for (let offset = fromIndex * SLOTS, end = toIndex * SLOTS; offset < end; offset += SLOTS) {
    into.count += sums[offset + COUNT] as number
    into.timeMs += sums[offset + TIME_MS] as number
    into.billableTimeMs += sums[offset + BILLABLE_TIME_MS] as number
    into.effectiveTimeMs += sums[offset + EFFECTIVE_TIME_MS] as number
    into.moneyCents += sums[offset + MONEY_CENTS] as number
  }
}

/** DayTotals as a snapshot keeps them (see the top). */
export interface StoredDays {
  /** The no-day bucket's five sums. */
  noDay: number[]
  /** The days that hold records, ascending: int32 bytes (little-endian). */
  days: Uint8Array
  /** Each of those days' SLOTS sums in turn: float64 bytes (little-endian). */
  sums: Uint8Array
}

/** Whether this machine's typed arrays hold the stored byte order (little-endian); elsewhere nothing is stored or read back. */
export const STORES_DAYS = new Uint8Array(Int32Array.of(1).buffer)[0] === 1

type TypedArrayOf<T> = { new (length: number): T; new (buffer: ArrayBufferLike, byteOffset: number, length: number): T; BYTES_PER_ELEMENT: number }

/** `bytes` read as `Type`: a view, or a copy when they are not aligned for it; null when they are not whole elements. */
function typedView<T extends Int32Array | Float64Array>(bytes: Uint8Array, Type: TypedArrayOf<T>): T | null {
  const size = Type.BYTES_PER_ELEMENT
  if (bytes.length % size !== 0) return null
  if (bytes.byteOffset % size === 0) return new Type(bytes.buffer, bytes.byteOffset, bytes.length / size)
  const out = new Type(bytes.length / size)
  new Uint8Array(out.buffer).set(bytes)
  return out
}

/**
 * The no-day bucket's stored sums: a whole count, and the other sums as they were kept, finite, as a stored day's
 * are taken (a duration that is no integer, in data a declaration's check never saw, makes them fractions; refused,
 * they were rebuilt, and added up in another order fractions round differently from the sums the state kept).
 */
function isSums(value: unknown): value is number[] {
  return Array.isArray(value) && value.length === SLOTS && Number.isSafeInteger(value[COUNT]) && value.every((item) => typeof item === 'number' && Number.isFinite(item))
}

export class DayTotals implements TotalsByDay {
  /** Page number (day / PAGE_DAYS, rounded down) → its days' sums. */
  private readonly pages = new Map<number, Page>()
  private readonly noDay = emptyTotals()
  private recordCount = 0

  /** Whether no record is counted on any day (nor without one). */
  get isEmpty(): boolean {
    return this.recordCount === 0
  }

  clear(): void {
    this.pages.clear()
    this.noDay.count = this.noDay.timeMs = this.noDay.billableTimeMs = this.noDay.effectiveTimeMs = this.noDay.moneyCents = 0
    this.recordCount = 0
  }

  /** Adds (`sign` 1) or takes away (-1) one record's or one day's totals on `day`. */
  add(day: number, totals: Totals, sign = 1): void {
    this.recordCount += sign * totals.count
    if (day === NO_DAY) {
      addInto(this.noDay, totals, sign)
      return
    }
    const pageNumber = Math.floor(day / PAGE_DAYS)
    const page = this.writablePage(pageNumber)
    addSlots(page.sums, (day - pageNumber * PAGE_DAYS) * SLOTS, totals, sign)
    page.records += sign * totals.count
    if (page.records === 0) this.pages.delete(pageNumber)
  }

  /** Adds the days in [fromDay, toDay) into `into` (both null: every day, and records without a start). */
  sum(fromDay: number | null, toDay: number | null, into = emptyTotals()): Totals {
    if (fromDay === null && toDay === null) addInto(into, this.noDay)
    const from = fromDay ?? Number.NEGATIVE_INFINITY
    const to = toDay ?? Number.POSITIVE_INFINITY
    if (!(from < to)) return into
    const firstPage = Math.floor(from / PAGE_DAYS)
    const lastPage = Math.floor((to - 1) / PAGE_DAYS)
    if (lastPage - firstPage + 1 <= this.pages.size) {
      for (let pageNumber = firstPage; pageNumber <= lastPage; pageNumber += 1) {
        const page = this.pages.get(pageNumber)
        if (page !== undefined) this.sumPage(pageNumber, page, from, to, into)
      }
    } else {
      for (const [pageNumber, page] of this.pages) {
        if (pageNumber >= firstPage && pageNumber <= lastPage) this.sumPage(pageNumber, page, from, to, into)
      }
    }
    return into
  }

  /** Subtracts every day of `other` (exact: the sums are integers). */
  subtract(other: DayTotals): void {
    this.recordCount -= other.recordCount
    addInto(this.noDay, other.noDay, -1)
    for (const [pageNumber, otherPage] of other.pages) {
      const page = this.writablePage(pageNumber)
      for (let slot = 0; slot < page.sums.length; slot += 1) page.sums[slot] = (page.sums[slot] as number) - (otherPage.sums[slot] as number)
      page.records -= otherPage.records
      if (page.records === 0) this.pages.delete(pageNumber)
    }
  }

  copy(): DayTotals {
    const out = new DayTotals()
    out.recordCount = this.recordCount
    addInto(out.noDay, this.noDay)
    for (const [pageNumber, page] of this.pages) out.pages.set(pageNumber, { sums: page.sums.slice(), records: page.records, frozen: 0 })
    return out
  }

  /** The totals as a snapshot keeps them: a copy, taken now. */
  stored(): StoredDays {
    return storedOf(this.pages, this.noDay)
  }

  /** The totals as they are now, kept as they are while this goes on (see the top). */
  frozen(): FrozenDays {
    return new FrozenDays(new Map(this.pages), { ...this.noDay })
  }

  /** The page to change: made when missing, copied first when a frozen view holds it. */
  private writablePage(pageNumber: number): Page {
    let page = this.pages.get(pageNumber)
    if (page === undefined || page.frozen > 0) {
      page = page === undefined ? emptyPage() : { sums: page.sums.slice(), records: page.records, frozen: 0 }
      this.pages.set(pageNumber, page)
    }
    return page
  }

  /**
   * Totals read back from `stored`, a page at a time (the days come in
   * order); null when the value is not one (days out of order, lengths that
   * disagree, a day without records).
   */
  static fromStored(value: unknown): DayTotals | null {
    if (!STORES_DAYS || typeof value !== 'object' || value === null) return null
    const stored = value as Partial<Record<keyof StoredDays, unknown>>
    if (!isSums(stored.noDay) || !(stored.days instanceof Uint8Array) || !(stored.sums instanceof Uint8Array)) return null
    const days = typedView(stored.days, Int32Array)
    const sums = typedView(stored.sums, Float64Array)
    if (days === null || sums === null || sums.length !== days.length * SLOTS) return null
    const out = new DayTotals()
    const [count, timeMs, billableTimeMs, effectiveTimeMs, moneyCents] = stored.noDay
    out.add(NO_DAY, { count, timeMs, billableTimeMs, effectiveTimeMs, moneyCents } as Totals)
    let page: Page | null = null
    let pageNumber = Number.NaN
    for (let at = 0; at < days.length; at += 1) {
      const day = days[at] as number
      const dayCount = sums[at * SLOTS + COUNT] as number
      if ((at > 0 && day <= (days[at - 1] as number)) || day === NO_DAY || !(Number.isSafeInteger(dayCount) && dayCount > 0)) return null
      if (page === null || Math.floor(day / PAGE_DAYS) !== pageNumber) {
        pageNumber = Math.floor(day / PAGE_DAYS)
        page = emptyPage()
        out.pages.set(pageNumber, page)
      }
      const offset = (day - pageNumber * PAGE_DAYS) * SLOTS
      for (let slot = 0; slot < SLOTS; slot += 1) page.sums[offset + slot] = sums[at * SLOTS + slot] as number
      page.records += dayCount
      out.recordCount += dayCount
    }
    return out
  }

  /** Records counted, on any day or none. */
  get size(): number {
    return this.recordCount
  }

  private sumPage(pageNumber: number, page: Page, from: number, to: number, into: Totals): void {
    const pageStart = pageNumber * PAGE_DAYS
    sumSlots(page.sums, Math.max(from - pageStart, 0), Math.min(to - pageStart, PAGE_DAYS), into)
  }
}

/** The day totals of a group key in `byKey`, made empty on first use. */
export function daysOf(byKey: Map<string, DayTotals>, key: string): DayTotals {
  let days = byKey.get(key)
  if (days === undefined) {
    days = new DayTotals()
    byKey.set(key, days)
  }
  return days
}

/** A copy of `base` with every day of each of `removed` taken away. */
export function withoutDays(base: DayTotals, removed: Iterable<DayTotals>): DayTotals {
  const out = base.copy()
  for (const days of removed) out.subtract(days)
  return out
}
