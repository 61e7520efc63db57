/* TrashItem (trash): one object moved to the trash, with the cascade group it went with; seen by whoever may see that object. */
import { declareResource, field } from '../declare.js'

export const TrashItem = declareResource({
  type: 'TrashItem',
  path: 'trash',
  creatable: false,
  updatable: false,
  description: 'an object in the trash',
  displayName: (rec) => `${String(rec.deletedObjectType ?? '')} (${String(rec.deletedObjectId ?? '')})`,
  standsFor: (rec) => ({ type: String(rec.deletedObjectType), id: String(rec.deletedObjectId) }),
  fields: [
    field.string('deletedObjectId', 'id of the deleted object', { required: true, indexed: true, inStub: true }),
    field.string('deletedObjectType', 'resource type of the deleted object', { required: true, inStub: true }),
    field.string('groupId', 'cascade group: everything deleted together', { indexed: true }),
    field.ref('deletedBy', 'User', 'who deleted the object'),
  ],
})
