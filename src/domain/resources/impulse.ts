/*
 * Impulse (time/impulses): a timer of a user. A running stopwatch has mode
 * STOPWATCH, `start` set and `stop` null; `$stop` turns it into a time
 * record (impulseActions.ts). An impulse is a stopwatch unless it says
 * otherwise, and a stopwatch written without a start and a stop starts
 * then: its start is the write's time (decided before the write is logged,
 * so a replay stores the same start), so a timer created as `{}` runs and
 * `$stop` stops it.
 */
import type { Rec } from '../schema.js'
import { declareResource, externalSyncFields, field, min, oneOf, userDisplayName } from '../declare.js'
import { timeSpanRulesBroken } from '../timeSpan.js'

const NOTHING_DERIVED: Readonly<Record<string, unknown>> = Object.freeze({})

/** A stopwatch without a start and a stop starts at the write's time. */
function startedStopwatch(rec: Rec, _given: Readonly<Record<string, unknown>>, nowMs: number): Readonly<Record<string, unknown>> {
  return rec.mode === 'STOPWATCH' && rec.start === null && rec.stop === null ? { start: nowMs } : NOTHING_DERIVED
}

export const Impulse = declareResource({
  type: 'Impulse',
  path: 'time/impulses',
  writeRule: 'ownRecord',
  description: 'a timer (stopwatch) of a user',
  displayName: userDisplayName,
  recordCheck: timeSpanRulesBroken,
  deriveOnWrite: startedStopwatch,
  fields: [
    field.ref('user', 'User', 'whose timer it is', { required: true }),
    field.string('mode', 'STOPWATCH or PAUSE', { constraints: [oneOf('STOPWATCH', 'PAUSE')], defaultValue: 'STOPWATCH' }),
    field.date('start', 'when the timer started (a stopwatch written without start and stop: the time of that write)'),
    field.date('stop', 'when the timer stopped'),
    field.long('duration', 'milliseconds measured', { constraints: [min(0)] }),
    field.string('description', 'what is being done'),
    field.boolean('billable', 'the time will be billed'),
    field.string('source', 'where the timer was started'),
    field.ref('project', 'Project', 'project the time is spent on'),
    field.ref('task', 'Task', 'task the time is spent on'),
    field.ref('client', 'Client', 'client the time is spent for'),
    field.ref('workType', 'WorkType', 'kind of work'),
    field.date('watchLast', 'when a client last reported watching the timer'),
    field.long('watchTimeout', 'milliseconds without a watch report before the timer counts as abandoned'),
    ...externalSyncFields(),
  ],
})
