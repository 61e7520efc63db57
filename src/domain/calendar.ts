/*
 * Calendar arithmetic for reports. A "local day" is the number of days since
 * 1970-01-01 of the calendar date an instant falls on in a time zone
 * (IANA name). Offsets are looked up with Intl once per zone and UTC hour
 * and cached, so cutting a million records into days costs a map lookup
 * each. Weeks, months and years are computed on local day numbers with UTC
 * date functions, which have no time zone of their own.
 *
 * Account and User declare their timeZone with the TimeZone constraint
 * (isTimeZone) and weekStart within 1..7, so both are valid when stored; a
 * zone name stored before that check existed is read as UTC.
 */
import { assert } from '../assert.js'

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
const MAX_CACHED_HOURS = 200_000

const formatters = new Map<string, Intl.DateTimeFormat>()
const offsetCache = new Map<string, Map<number, number>>()

export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name })
    return true
  } catch {
    return false
  }
}

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone)
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: isTimeZone(timeZone) ? timeZone : 'UTC',
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    })
    formatters.set(timeZone, format)
  }
  return format
}

/** Offset of the zone from UTC at that instant, in ms (UTC+2 → 7,200,000). */
export function zoneOffsetMs(ms: number, timeZone: string): number {
  if (timeZone === 'UTC') return 0
  const hour = Math.floor(ms / HOUR_MS)
  let cache = offsetCache.get(timeZone)
  if (cache === undefined) {
    cache = new Map()
    offsetCache.set(timeZone, cache)
  }
  const cached = cache.get(hour)
  if (cached !== undefined) return cached
  const parts: Record<string, number> = {}
  for (const part of formatter(timeZone).formatToParts(new Date(hour * HOUR_MS))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value)
  }
  const asUtc = Date.UTC(parts.year ?? 1970, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0)
  const offset = asUtc - hour * HOUR_MS
  if (cache.size > MAX_CACHED_HOURS) cache.clear()
  cache.set(hour, offset)
  return offset
}

export function localDay(ms: number, timeZone: string): number {
  return Math.floor((ms + zoneOffsetMs(ms, timeZone)) / DAY_MS)
}

/** The local day of a `yyyy-MM-dd` text; undefined when it is not a real date. */
export function parseDay(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim())
  if (match === null) return undefined
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const ms = Date.UTC(year, month - 1, day)
  const date = new Date(ms)
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined
  return ms / DAY_MS
}

export function formatDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10)
}

/** ISO weekday of a local day: Monday = 1 … Sunday = 7. */
function weekday(day: number): number {
  return ((new Date(day * DAY_MS).getUTCDay() + 6) % 7) + 1
}

/** The first day of the week holding `day`, for weeks starting on `weekStart` (Monday = 1 … Sunday = 7). */
export function startOfWeek(day: number, weekStart: number): number {
  assert(Number.isInteger(weekStart) && weekStart >= 1 && weekStart <= 7, `weekStart ${weekStart} is not 1..7`)
  return day - ((weekday(day) - weekStart + 7) % 7)
}

export function startOfMonth(day: number): number {
  const date = new Date(day * DAY_MS)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / DAY_MS
}

export function startOfYear(day: number): number {
  return Date.UTC(new Date(day * DAY_MS).getUTCFullYear(), 0, 1) / DAY_MS
}

/** Start of the month `months` after the month of `day`. */
export function monthStartAfter(day: number, months: number): number {
  const date = new Date(day * DAY_MS)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1) / DAY_MS
}

export function yearStartAfter(day: number, years: number): number {
  return Date.UTC(new Date(day * DAY_MS).getUTCFullYear() + years, 0, 1) / DAY_MS
}
