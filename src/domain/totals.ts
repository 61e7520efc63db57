/*
 * The totals of time records a report answers (count, times, money), and
 * what a route reads of a group's totals by day: their sum over a range of
 * days. The engine keeps them live per day (engine/dayTotals.ts, whose
 * DayTotals is such a range), the query layer picks the groups a report
 * needs (query/reportDays.ts), and the route renders the sums.
 */

export interface Totals {
  count: number
  timeMs: number
  billableTimeMs: number
  effectiveTimeMs: number
  moneyCents: number
}

export function emptyTotals(): Totals {
  return { count: 0, timeMs: 0, billableTimeMs: 0, effectiveTimeMs: 0, moneyCents: 0 }
}

/** A group's totals by day, read as sums over ranges of days. */
export interface TotalsByDay {
  /** The totals of days [fromDay, toDay) (day numbers since the epoch; both null: every day, and records without a start). */
  sum(fromDay: number | null, toDay: number | null): Totals
}
