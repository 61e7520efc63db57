/* Access (accesses): a user's licence for one product; Account.licenseLimit caps them per product (@exceeded). */
import { createdField, declareResource, field, oneOf } from '../declare.js'

export const Access = declareResource({
  type: 'Access',
  path: 'accesses',
  description: 'a licence of a user for a product',
  displayName: (rec) => String(rec.product ?? ''),
  fields: [
    field.ref('user', 'User', 'who has the access', { required: true }),
    field.string('product', 'CORE, TIME or BILLING', { required: true, indexed: true, inStub: true, constraints: [oneOf('CORE', 'TIME', 'BILLING')] }),
    createdField(),
  ],
})
