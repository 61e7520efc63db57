/*
 * SecretKey: a key that logs its user in without a password. Its routes
 * are `users/@self/secretkeys` (routes/secretKeys.ts); the key text is made
 * by the server and shown once, so `secretKey` is never stored.
 */
import { declareResource, field } from '../schema.js'

export const SecretKey = declareResource({
  type: 'SecretKey',
  path: 'secretkeys',
  writeRule: 'ownRecord',
  readRule: 'ownRecord',
  description: 'a secret key of a user',
  displayName: (rec) => String(rec.name ?? ''),
  fields: [
    field.string('secretKey', 'the key, made by the server and shown once on creation', { access: 'READ_ONLY' }),
    field.string('name', 'name of the key', { inStub: true }),
    field.ref('user', 'User', 'whose key it is', { required: true }),
  ],
})
