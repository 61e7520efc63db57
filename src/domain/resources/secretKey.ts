/*
 * SecretKey: a key that logs its user in without a password. It is made
 * only by the server, only for the caller (`POST users/@self/secretkeys`,
 * or the same through the generic `POST secretkeys`: secretKeys.ts): its
 * id is a random version-4 UUID, independent of the key text; the text is
 * shown once and never stored, only its SHA-256 (`keyHash`, INTERNAL:
 * never shown, read from a body, filtered or listed), which login looks
 * up through its index. `user` is the user who made it and never changes,
 * so a key cannot be handed to another user.
 *
 * A user's keys are read and changed by that user only: not the owner, not
 * an admin (`userOnly`; a change needs to see the key, policy.ts), and a
 * key another user cannot see does not exist for them (404). An admin may
 * revoke — delete — the keys of the users they may manage, never the
 * owner's; the owner anyone's (`revocableBy`). A delete is for good: a
 * revoked key does not wait in the trash for someone to restore it.
 */
import { declareResource, field } from '../declare.js'

export const SecretKey = declareResource({
  type: 'SecretKey',
  path: 'secretkeys',
  writeRule: 'ownRecord',
  readRule: 'userOnly',
  revocableBy: 'managersOfUser',
  removedForGood: true,
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
