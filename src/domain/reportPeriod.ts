/*
 * Report periods (interface.md, "Reports"; ARCHITECTURE.md §4). A period is a range
 * of local days [fromDay, toDay) in the account's time zone, or unbounded.
 *
 *   range 0    no limit
 *   range 1    the day of range_from
 *   range 7    the week (starting on the account's weekStart) of range_from
 *   range 31   the month of range_from
 *   range 365  the year of range_from
 *   range 999  range_from … range_to, both days included
 *
 * For 7, 31 and 365 a range_to extends the period to the end of its week,
 * month or year. `offset` shifts the period by whole ranges (negative: into
 * the past). range_from defaults to today in the account's time zone.
 * Slices cut a period into days, weeks (7-day steps from its start),
 * calendar months or calendar years.
 */
import { wrongParameter } from './errors.js'
import { localDay, monthStartAfter, parseDay, startOfMonth, startOfWeek, startOfYear, yearStartAfter } from './calendar.js'

export type RangeKind = 0 | 1 | 7 | 31 | 365 | 999

export interface Period {
  fromDay: number | null
  toDay: number | null
}

export interface RangeSpec {
  range: RangeKind
  fromDay: number
  toDay: number | null
  offset: number
}

const RANGES: readonly RangeKind[] = [0, 1, 7, 31, 365, 999]
export const MAX_DEPTH = 120
const MAX_SLICES = 5000

function integerParameter(query: ReadonlyMap<string, string>, name: string, fallback: number, min: number, max: number): number {
  const text = query.get(name)
  if (text === undefined || text === '') return fallback
  if (!/^-?\d{1,9}$/.test(text.trim())) throw wrongParameter(`${name} must be an integer, got '${text.slice(0, 32)}'`)
  const value = Number(text)
  if (value < min || value > max) throw wrongParameter(`${name} must be between ${min} and ${max}`)
  return value
}

function dayParameter(query: ReadonlyMap<string, string>, name: string): number | null {
  const text = query.get(name)
  if (text === undefined || text === '') return null
  const day = parseDay(text)
  if (day === undefined) throw wrongParameter(`${name} must be a date yyyy-MM-dd, got '${text.slice(0, 32)}'`)
  return day
}

/** `defaultRange`: the range of a request that names none (0, no limit, for most reports; a year for the trend and the slices). */
export function parseRangeSpec(query: ReadonlyMap<string, string>, timeZone: string, nowMs: number, defaultRange: RangeKind = 0): RangeSpec {
  const range = integerParameter(query, 'range', defaultRange, 0, 999) as RangeKind
  if (!RANGES.includes(range)) throw wrongParameter(`range must be one of ${RANGES.join(', ')}`)
  const fromDay = dayParameter(query, 'range_from') ?? localDay(nowMs, timeZone)
  const toDay = dayParameter(query, 'range_to')
  if (range === 999 && toDay === null) throw wrongParameter('range 999 needs range_to')
  if (toDay !== null && toDay < fromDay) throw wrongParameter('range_to is before range_from')
  return { range, fromDay, toDay, offset: integerParameter(query, 'offset', 0, -100_000, 100_000) }
}

/** The period of a range spec shifted by `offset` more ranges. */
export function periodOf(spec: RangeSpec, weekStart: number, extraOffset = 0): Period {
  const offset = spec.offset + extraOffset
  const to = spec.toDay ?? spec.fromDay
  switch (spec.range) {
    case 0:
      return { fromDay: null, toDay: null }
    case 1:
      return { fromDay: spec.fromDay + offset, toDay: spec.fromDay + offset + 1 }
    case 7: {
      const start = startOfWeek(spec.fromDay, weekStart)
      const weeks = Math.max(1, (startOfWeek(to, weekStart) - start) / 7 + 1)
      return { fromDay: start + 7 * weeks * offset, toDay: start + 7 * weeks * (offset + 1) }
    }
    case 31: {
      const start = startOfMonth(spec.fromDay)
      const last = startOfMonth(to)
      const months = monthsBetween(start, last) + 1
      return { fromDay: monthStartAfter(start, months * offset), toDay: monthStartAfter(start, months * (offset + 1)) }
    }
    case 365: {
      const start = startOfYear(spec.fromDay)
      const years = new Date(startOfYear(to) * 86_400_000).getUTCFullYear() - new Date(start * 86_400_000).getUTCFullYear() + 1
      return { fromDay: yearStartAfter(start, years * offset), toDay: yearStartAfter(start, years * (offset + 1)) }
    }
    case 999: {
      const length = to - spec.fromDay + 1
      return { fromDay: spec.fromDay + length * offset, toDay: spec.fromDay + length * (offset + 1) }
    }
  }
}

function monthsBetween(fromMonthStart: number, toMonthStart: number): number {
  const from = new Date(fromMonthStart * 86_400_000)
  const to = new Date(toMonthStart * 86_400_000)
  return (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + (to.getUTCMonth() - from.getUTCMonth())
}

/** Cuts a bounded period into slices of days (1), weeks (7), months (31) or years (365). */
export function slicesOf(period: Period, sliceBy: number): Period[] {
  if (period.fromDay === null || period.toDay === null) throw wrongParameter('slices need a bounded range (range other than 0)')
  if (![1, 7, 31, 365].includes(sliceBy)) throw wrongParameter('slice_by must be 1, 7, 31 or 365')
  const slices: Period[] = []
  let start = period.fromDay
  while (start < period.toDay) {
    const next = sliceBy === 1 ? start + 1 : sliceBy === 7 ? start + 7 : sliceBy === 31 ? monthStartAfter(start, 1) : yearStartAfter(start, 1)
    slices.push({ fromDay: start, toDay: Math.min(next, period.toDay) })
    if (slices.length > MAX_SLICES) throw wrongParameter(`at most ${MAX_SLICES} slices`)
    start = next
  }
  return slices
}
