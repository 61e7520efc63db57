/*
 * AuthToken (internal): an access or refresh token. The id is the SHA-256 of
 * the token text, so neither the log nor a snapshot holds a usable token, and
 * a lookup by hash compares no secret byte by byte.
 */
import { declareResource, field } from '../declare.js'

export const AuthToken = declareResource({
  type: 'AuthToken',
  path: null,
  internal: true,
  description: 'an access or refresh token',
  displayName: (rec) => String(rec.kind ?? ''),
  fields: [
    field.ref('user', 'User', 'whose token it is', { required: true }),
    field.string('kind', 'access or refresh', { required: true }),
    field.date('expiresAt', 'when the token stops working', { required: true }),
    field.string('pairId', 'the access token issued together with a refresh token'),
  ],
})
