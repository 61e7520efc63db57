/*
 * Impulse (time/impulses): a timer of a user. A running stopwatch has mode
 * STOPWATCH, `start` set and `stop` null; `$stop` turns it into a time
 * record (impulseActions.ts).
 */
import { declareResource, externalSyncFields, field, min, oneOf, userDisplayName } from '../schema.js'
import { timeSpanRulesBroken } from '../timeSpan.js'

export const Impulse = declareResource({
  type: 'Impulse',
  path: 'time/impulses',
  writeRule: 'ownRecord',
  description: 'a timer (stopwatch) of a user',
  displayName: userDisplayName,
  recordCheck: timeSpanRulesBroken,
  fields: [
    field.ref('user', 'User', 'whose timer it is', { required: true }),
    field.string('mode', 'STOPWATCH or PAUSE', { constraints: [oneOf('STOPWATCH', 'PAUSE')] }),
    field.date('start', 'when the timer started'),
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
