/* ExternalSystem (externalsystems): a system that maintains synced objects. */
import { declareResource, field } from '../declare.js'

export const ExternalSystem = declareResource({
  type: 'ExternalSystem',
  path: 'externalsystems',
  writeRule: 'projectManager',
  description: 'an external system objects are synced with',
  displayName: (rec) => String(rec.name ?? ''),
  fields: [field.string('name', 'name of the system', { inStub: true }), field.string('integrationPlugin', 'plugin that integrates the system')],
})
