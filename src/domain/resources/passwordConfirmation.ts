/*
 * PasswordConfirmation (internal): step 1 of a password change. The id is
 * the SHA-256 of the confirmation id handed to the client, so neither the
 * log nor a snapshot holds a usable confirmation. Step 2 consumes it; it
 * stops working at `expiresAt`. `keepTokenId` is the token of the user who
 * asked for it themself: that session survives the change, every other
 * token of the user ends. Its id feeds the global confirmations index
 * (globalFeed.ts): the public step 2 finds the tenants holding it.
 */
import { declareResource, field } from '../declare.js'

export const PasswordConfirmation = declareResource({
  type: 'PasswordConfirmation',
  path: null,
  internal: true,
  description: 'a pending password change',
  displayName: () => 'password confirmation',
  globalIndex: {
    table: 'confirmations',
    keyOf: (rec) => rec.id,
    heldIn: (state, key) => state.get(PasswordConfirmation.type, key) !== undefined,
  },
  fields: [
    field.ref('user', 'User', 'whose password it changes', { required: true }),
    field.date('expiresAt', 'when the confirmation stops working', { required: true }),
    field.string('keepTokenId', 'the access token (SHA-256) that survives the change'),
  ],
})
