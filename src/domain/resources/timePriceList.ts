/*
 * TimePriceList (billing/pricelists/time): an hourly price. Which of user,
 * work type, project, task and client are set picks its priority level
 * (pricing.ts).
 */
import { declareResource, field } from '../schema.js'

export const TimePriceList = declareResource({
  type: 'TimePriceList',
  path: 'billing/pricelists/time',
  description: 'an hourly price for a combination of user, work type, project, task and client',
  displayName: (rec) => (typeof rec.price === 'number' ? String(rec.price) : ''),
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
