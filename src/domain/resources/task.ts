/*
 * Task (time/tasks): a piece of work of a project. A new task's author is
 * the user who creates it, unless the body names one.
 */
import type { Rec } from '../schema.js'
import { declareResource, externalSyncFields, field, size } from '../declare.js'

export const Task = declareResource({
  type: 'Task',
  path: 'time/tasks',
  writeRule: 'projectOwner',
  description: 'a task of a project',
  displayName: (rec) => String(rec.name ?? ''),
  inner: [{ name: 'timerecords', childType: 'TimeRecord', via: 'task' }],
  onCreate: (_tx, rec, creator): Rec => (rec.author === null && creator !== null ? { ...rec, author: creator.userId } : rec),
  fields: [
    field.string('name', 'name of the task', { inStub: true }),
    field.string('code', 'short code', { constraints: [size(0, 20)] }),
    field.string('note', 'free text'),
    field.boolean('done', 'the task is done (may be null)'),
    field.boolean('effective', 'time on the task counts as effective', { required: true, defaultValue: true }),
    field.ref('author', 'User', 'who created the task'),
    field.ref('owner', 'User', 'who is responsible for the task'),
    field.ref('project', 'Project', 'project the task belongs to'),
    field.long('timeBudget', 'milliseconds available'),
    field.double('priceBudget', 'money available'),
    ...externalSyncFields(),
  ],
})
