/*
 * SecretKey: a key that logs its user in without a password. It is made
 * only by the server, only for the caller (`POST users/@self/secretkeys`,
 * or the same through the generic `POST secretkeys`: secretKeys.ts): its
 * id is a random version-4 UUID, independent of the key text; the text is
 * shown once and never stored, only its SHA-256 (`keyHash`, INTERNAL:
 * never shown, read from a body, filtered or listed), which login looks
 * up through its index. `user` is the user who made it and never changes,
 * so a key cannot be handed to another user.
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
    field.date('expiration', 'the key no longer logs in from this instant on; null: never expires'),
    field.ref('user', 'User', 'whose key it is: the user who made it', { required: true, access: 'READ_ONLY' }),
    field.string('keyHash', 'SHA-256 of the key text, which login finds the key by', { access: 'INTERNAL', indexed: true }),
  ],
})
