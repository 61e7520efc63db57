/*
 * The rules between `start`, `stop` and `duration` of a time record or an
 * impulse, checked with the constraints of every stored record
 * (the declaration's recordCheck, input.ts), so a create, a PUT, a PATCH,
 * a `$set` and a batch item are all held to it, on the record as it would
 * be stored:
 *
 *   * `stop` before `start` is refused on `stop` (constraint NotBeforeStart);
 *   * with both set, a `duration` other than stop − start (milliseconds,
 *     exactly: the spec gives durations as integer ms and dates to the
 *     millisecond, and a `$stop` of an impulse stores exactly stop − start)
 *     is refused on `duration` (constraint StopMinusStart).
 *
 * A time record also completes its span when it is written (its
 * declaration's deriveOnWrite, run by the generic write path), so that
 * every report, summary, `$filter` and export reads the same stored
 * duration (`summary=sum(duration)` used to miss the records written with
 * a start and a stop only, which the reports counted):
 *
 *   * with a start and a duration (0 or more), the stop is start +
 *     duration, unless the write gives the stop: a changed start moves the
 *     record (its duration stays, the stop follows; a start moved past the
 *     old stop is no error), a changed duration moves the stop;
 *   * with a start and a stop given by the write (or no duration), the
 *     duration is stop − start, unless the write gives a duration too
 *     (then it is checked, as above): a changed stop changes the duration.
 *
 * So a record with a start has either both or neither of the others: an
 * open record (a start alone) stays open, and a write that clears the stop
 * of a record with a duration gets it back from the duration (clear both
 * to reopen it). A record without a start (a bare duration) is kept as
 * given. Records stored before this rule keep what they had until their
 * next write; the reports count stop − start for them where the duration
 * is missing (pricing.ts durationOf), as they always did.
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

const NOTHING_DERIVED: Readonly<Record<string, unknown>> = Object.freeze({})

/** The stop or the duration a time record written with `given` stores beside its other two (see the top). */
export function completedTimeSpan(rec: Rec, given: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  const { start, stop, duration } = rec
  if (typeof start !== 'number') return NOTHING_DERIVED
  const stopGiven = Object.hasOwn(given, 'stop') && typeof stop === 'number'
  if (typeof duration === 'number' && duration >= 0 && !stopGiven) {
    return stop === start + duration ? NOTHING_DERIVED : { stop: start + duration }
  }
  if (typeof stop === 'number' && stop >= start && (typeof duration !== 'number' || !Object.hasOwn(given, 'duration'))) {
    return duration === stop - start ? NOTHING_DERIVED : { duration: stop - start }
  }
  return NOTHING_DERIVED
}
