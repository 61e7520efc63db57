/*
 * A wall-clock time of a time zone as an instant: what "2024-03-31 02:30"
 * in Europe/Berlin means when a file from another tool says it (imports),
 * or where a local day of a calendar window starts.
 *
 * The instant t of local time L satisfies t + offset(t) = L. The zone's
 * offsets a day before and a day after L (a zone changes its offset at most
 * once in between) give at most two candidates t = L − offset; each one is
 * kept when its own offset agrees:
 *
 *   one fits    the usual case;
 *   both fit    an overlap (the clock was put back: 02:30 happened twice):
 *               the earlier instant;
 *   none fits   a gap (the clock was put forward: 02:30 never happened):
 *               L read with the offset before the change, so 02:30 becomes
 *               03:30 of the new offset (the "compatible" choice of
 *               JavaScript's Temporal and of java.time).
 *
 * Offsets come from calendar.ts (Intl, cached per zone and hour).
 */
import { zoneOffsetMs } from './calendar.js'

const DAY_MS = 86_400_000

/** The instant (epoch ms) of local time `localMs` (a wall clock written as if it were UTC) in `timeZone`. */
export function instantOfLocalTime(localMs: number, timeZone: string): number {
  const before = zoneOffsetMs(localMs - DAY_MS, timeZone)
  const after = zoneOffsetMs(localMs + DAY_MS, timeZone)
  const fits = (offset: number) => zoneOffsetMs(localMs - offset, timeZone) === offset
  const beforeFits = fits(before)
  const afterFits = before !== after && fits(after)
  if (beforeFits && afterFits) return Math.min(localMs - before, localMs - after)
  if (beforeFits) return localMs - before
  if (afterFits) return localMs - after
  return localMs - before
}

/** The instant local day `day` (days since 1970-01-01) starts at in `timeZone`. */
export function startOfLocalDay(day: number, timeZone: string): number {
  return instantOfLocalTime(day * DAY_MS, timeZone)
}
