/*
 * TimePriceList (billing/pricelists/time): an hourly price. Which of user,
 * work type, project, task and client are set picks its priority level
 * (pricing.ts); a combination that is no level is refused on create and
 * whenever a change alters which of them are set.
 */
import { checkPriceListLevel, dimensionsChanged } from '../pricing.js'
import { declareResource, field } from '../declare.js'

export const TimePriceList = declareResource({
  type: 'TimePriceList',
  path: 'billing/pricelists/time',
  description: 'an hourly price for a combination of user, work type, project, task and client',
  displayName: (rec) => (typeof rec.price === 'number' ? String(rec.price) : ''),
  onCreate: (_tx, rec) => {
    checkPriceListLevel(rec)
    return rec
  },
  onChange: (_tx, before, after) => {
    if (after !== undefined && after.trashItem === null && dimensionsChanged(before, after)) checkPriceListLevel(after)
  },
  fields: [
    field.double('price', 'price per hour', { inStub: true }),
    field.string('note', 'free text'),
    field.ref('user', 'User', 'the price applies to this user'),
    field.ref('workType', 'WorkType', 'the price applies to this work type'),
    field.ref('project', 'Project', 'the price applies to this project'),
    field.ref('task', 'Task', 'the price applies to this task'),
    field.ref('client', 'Client', 'the price applies to this client'),
  ],
})
