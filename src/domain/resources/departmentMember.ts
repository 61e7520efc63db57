/* DepartmentMember (departmentmembers; inner collection departments/{id}/members): a user in a department. */
import { declareResource, field, userDisplayName } from '../declare.js'

export const DepartmentMember = declareResource({
  type: 'DepartmentMember',
  path: 'departmentmembers',
  unique: [['department', 'user']],
  description: 'a member of a department',
  displayName: userDisplayName,
  fields: [field.ref('department', 'Department', 'the department', { required: true }), field.ref('user', 'User', 'the member', { required: true })],
})
