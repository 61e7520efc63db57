/*
 * The rule between `start`, `stop` and `duration` of a time record or an
 * impulse (issue 26), checked with the constraints of every stored record
 * (the declaration's recordCheck, input.ts), so a create, a PUT, a `$set`
 * and a batch item are all held to it, on the record as it would be stored:
 *
 *   * `stop` before `start` is refused on `stop` (constraint NotBeforeStart);
 *   * with both set, a `duration` other than stop − start (milliseconds,
 *     exactly: the spec gives durations as integer ms and dates to the
 *     millisecond, and a `$stop` of an impulse stores exactly stop − start)
 *     is refused on `duration` (constraint StopMinusStart).
 *
 * Whatever is missing is not checked: a record with a start and a duration
 * and no stop (an open record, a running stopwatch), or only a duration, is
 * kept as given; reports count stop − start where the duration is missing
 * (pricing.ts durationOf). A change that moves `start` or `stop` of a record
 * with a duration sends the new duration with it.
 */
import type { Rec } from './record.js'
import type { FieldsRuleBroken } from './schema.js'

const KEPT: readonly FieldsRuleBroken[] = []

export function timeSpanRulesBroken(rec: Rec): readonly FieldsRuleBroken[] {
  const { start, stop, duration } = rec
  if (typeof start !== 'number' || typeof stop !== 'number') return KEPT
  if (stop < start) return [{ field: 'stop', constraint: 'NotBeforeStart', message: `must not be before start (stop ${new Date(stop).toISOString()}, start ${new Date(start).toISOString()})` }]
  if (typeof duration === 'number' && duration !== stop - start) {
    return [{ field: 'duration', constraint: 'StopMinusStart', message: `must be stop − start, ${stop - start} ms, when both are given (it is ${duration} ms)` }]
  }
  return KEPT
}
