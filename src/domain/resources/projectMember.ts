/* ProjectMember (time/projectmembers; inner collection time/projects/{id}/members): a user taking part in a project. */
import { declareResource, field, userDisplayName } from '../declare.js'

export const ProjectMember = declareResource({
  type: 'ProjectMember',
  path: 'time/projectmembers',
  writeRule: 'projectOwner',
  unique: [['project', 'user']],
  description: 'a member of a project',
  displayName: userDisplayName,
  fields: [field.ref('user', 'User', 'the member', { required: true }), field.ref('project', 'Project', 'the project (from the path of the inner collection)', { required: true })],
})
