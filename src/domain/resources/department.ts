/* Department (departments): a group of users with a manager. */
import { declareResource, field } from '../declare.js'

export const Department = declareResource({
  type: 'Department',
  path: 'departments',
  description: 'a department of the company',
  cascades: ['DepartmentMember'],
  displayName: (rec) => String(rec.name ?? ''),
  inner: [{ name: 'members', childType: 'DepartmentMember', via: 'department' }],
  fields: [field.string('name', 'name of the department', { inStub: true }), field.ref('manager', 'User', 'who manages the department')],
})
