/*
 * Dates of an export in the account's time zone: ISO 8601 local date and
 * time with the zone's offset at that instant (`2024-06-30T23:30:00+02:00`;
 * milliseconds only when there are any), and for a spreadsheet the local
 * wall-clock time as a date without a zone (a spreadsheet's dates have
 * none). Offsets come from domain/calendar.ts (Intl, cached per zone and
 * hour), so a hundred thousand dates cost a map lookup each.
 */
import { zoneOffsetMs } from '../../domain/calendar.js'

const MINUTE_MS = 60_000

function offsetText(offsetMs: number): string {
  if (offsetMs === 0) return 'Z'
  const minutes = Math.round(Math.abs(offsetMs) / MINUTE_MS)
  const hours = Math.floor(minutes / 60)
  return `${offsetMs < 0 ? '-' : '+'}${String(hours).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`
}

/** The instant as ISO 8601 local time of `timeZone` with its offset. */
export function isoInZone(ms: number, timeZone: string): string {
  const offsetMs = zoneOffsetMs(ms, timeZone)
  const local = new Date(ms + offsetMs).toISOString()
  const withoutMs = local.endsWith('.000Z') ? local.slice(0, 19) : local.slice(0, 23)
  return withoutMs + offsetText(offsetMs)
}

/** The local wall-clock time of the instant in `timeZone`, as a Date whose UTC fields show it (for a spreadsheet cell). */
export function wallClockDate(ms: number, timeZone: string): Date {
  return new Date(ms + zoneOffsetMs(ms, timeZone))
}
