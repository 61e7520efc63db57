/*
 * TimeRecord (time/timerecords): time a user spent, optionally on a project,
 * task and work type. Its start, stop and duration agree (timeSpan.ts): the
 * one a write leaves out is derived from the other two and stored. A write
 * with `calculate_price=true` stores the price its price lists give
 * (pricing.ts).
 */
import { priceFields } from '../pricing.js'
import { declareResource, externalSyncFields, field, min, userDisplayName } from '../declare.js'
import { completedTimeSpan, timeSpanRulesBroken } from '../timeSpan.js'
import { TimePriceList } from './timePriceList.js'

export const TimeRecord = declareResource({
  type: 'TimeRecord',
  path: 'time/timerecords',
  writeRule: 'ownRecord',
  description: 'time a user spent',
  displayName: userDisplayName,
  indexOrder: 'start',
  recordCheck: timeSpanRulesBroken,
  deriveOnWrite: completedTimeSpan,
  lockedByDate: 'start',
  writeOptions: [{ param: 'calculate_price', derive: (rec, state) => priceFields(rec, state.collection(TimePriceList.type).values(), state) }],
  fields: [
    field.ref('user', 'User', 'who spent the time', { required: true }),
    field.date('start', 'start date and time', { rangeIndexed: true }),
    field.date('stop', 'end date and time (start + duration when not given)'),
    field.long('duration', 'milliseconds spent (stop − start when not given)', { constraints: [min(0)] }),
    field.string('description', 'what was done'),
    field.boolean('effective', 'the time counts as effective', { required: true, defaultValue: true }),
    field.boolean('billable', 'the time will be billed'),
    field.double('price', 'price of the time'),
    field.double('unitPrice', 'hourly price that was applied'),
    field.boolean('priceModified', 'the price was set by hand: no price list is applied'),
    field.boolean('priceAutoCalculation', 'false: the price is never calculated from price lists (like priceModified)'),
    field.string('recordType', 'kind of record, free text of the client (the original does not list its values)'),
    field.boolean('approved', 'the record was approved'),
    field.boolean('billed', 'the record was billed', { access: 'READ_ONLY' }),
    field.ref('project', 'Project', 'project the time was spent on'),
    field.ref('task', 'Task', 'task the time was spent on'),
    field.ref('client', 'Client', 'client the time was spent for'),
    field.ref('workType', 'WorkType', 'kind of work'),
    field.refList('tags', 'Tag', "tags of the record; $filter=tags/id eq '…' finds the records that carry one"),
    ...externalSyncFields(),
  ],
})
