/* Project (time/projects): every field of interface.md plus resources.md's autoMembership. */
import { declareResource, externalSyncFields, field, size } from '../schema.js'

export const Project = declareResource({
  type: 'Project',
  path: 'time/projects',
  aliases: ['projects'],
  writeRule: 'projectOwner',
  description: 'a project that time is tracked on',
  cascades: ['ProjectMember', 'ProjectWorkTypeLink', 'TimeRecord', 'Impulse', 'Task'],
  displayName: (rec) => String(rec.name ?? ''),
  appends: [
    { name: 'timerecords-count', field: 'timeRecordsCount', childType: 'TimeRecord', via: 'project' },
    { name: 'tasks-count', field: 'tasksCount', childType: 'Task', via: 'project', counts: (task) => task.done !== true },
    { name: 'members-count', field: 'membersCount', childType: 'ProjectMember', via: 'project' },
  ],
  inner: [
    { name: 'tasks', childType: 'Task', via: 'project' },
    { name: 'timerecords', childType: 'TimeRecord', via: 'project' },
    { name: 'members', childType: 'ProjectMember', via: 'project' },
    { name: 'worktypelinks', childType: 'ProjectWorkTypeLink', via: 'project' },
    { name: 'impulses', childType: 'Impulse', via: 'project' },
  ],
  fields: [
    field.boolean('active', 'project is currently active', { defaultValue: true }),
    field.boolean('autoMembership', 'every new user becomes a member'),
    field.date('begins', 'start date and time', { rangeIndexed: true }),
    field.boolean('billable', 'will be billed to the client'),
    field.ref('client', 'Client', 'client the project is for'),
    field.string('code', 'short code', { constraints: [size(0, 20)] }),
    field.boolean('effective', 'time on the project counts as effective', { required: true, defaultValue: true }),
    field.date('ends', 'completion date and time'),
    ...externalSyncFields(),
    field.long('membersCount', 'number of members (append=members-count)', { access: 'READ_ONLY', computed: true }),
    field.string('name', 'name of the project', { inStub: true }),
    field.string('note', 'free text'),
    field.ref('owner', 'User', 'owner of the project', { required: true }),
    field.boolean('personal', 'available only to the owner'),
    field.double('priceBudget', 'money available'),
    field.long('tasksCount', 'tasks that are not done (append=tasks-count)', { access: 'READ_ONLY', computed: true }),
    field.long('timeBudget', 'milliseconds available'),
    field.long('timeRecordsCount', 'number of time records (append=timerecords-count)', { access: 'READ_ONLY', computed: true }),
  ],
})
