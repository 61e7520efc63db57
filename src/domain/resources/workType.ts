/* WorkType (time/worktypes): a kind of work (or break) that time is booked as. */
import { declareResource, externalSyncFields, field, oneOf, size } from '../declare.js'

export const WorkType = declareResource({
  type: 'WorkType',
  path: 'time/worktypes',
  writeRule: 'projectManager',
  description: 'a kind of work',
  cascades: ['ProjectWorkTypeLink'],
  displayName: (rec) => String(rec.name ?? ''),
  inner: [
    { name: 'timerecords', childType: 'TimeRecord', via: 'workType' },
    { name: 'pricelists', childType: 'TimePriceList', via: 'workType' },
  ],
  fields: [
    field.string('name', 'name of the work type', { inStub: true }),
    field.string('code', 'short code', { constraints: [size(0, 20)] }),
    field.boolean('active', 'work type is in use', { defaultValue: true }),
    field.boolean('effective', 'time of this type counts as effective', { required: true, defaultValue: true }),
    field.string('category', 'WORK or BREAK', { constraints: [oneOf('WORK', 'BREAK')] }),
    ...externalSyncFields(),
  ],
})
