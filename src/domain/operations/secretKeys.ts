/*
 * The caller's own secret keys (secretKeys.ts has what a key is): creating
 * one for the text decided before the write — for the caller only: a
 * request may name neither the id nor the text, and as `user` only the
 * caller — and removing one of the caller's keys for good (a revoked
 * credential must not come back from the trash); another user's key is not
 * found.
 */
import type { Caller } from '../caller.js'
import { secretId } from '../credentials.js'
import { accessDenied, notFound, wrongParameter } from '../errors.js'
import { insertRecord } from '../recordMaking.js'
import { SecretKey } from '../resources/secretKey.js'
import type { Rec } from '../schema.js'
import { removeForGood } from '../trash.js'
import type { Tx } from '../tx.js'

/** What a caller may say about a new key: its name and expiration; `user` only when it is the caller, never the id or the text. */
export interface SecretKeyRequest {
  name?: unknown
  /** When the key stops logging in (epoch ms), or null/absent: never. */
  expiration?: unknown
  user?: unknown
  id?: unknown
  secretKey?: unknown
}

/** Stores a new key of the caller for the text `key` (decided before the write); the text itself is not stored. */
export function createSecretKey(tx: Tx, caller: Caller, request: SecretKeyRequest, key: string): Rec {
  if (request.id !== undefined && request.id !== null) throw wrongParameter('a secret key gets its id from the server')
  if (request.secretKey !== undefined && request.secretKey !== null) throw wrongParameter('a secret key is made by the server; it cannot be chosen')
  if (request.user !== undefined && request.user !== null && request.user !== caller.userId) throw accessDenied('a secret key is made for the caller only')
  const values: Record<string, unknown> = { user: caller.userId, keyHash: secretId(key) }
  if (request.name !== undefined) values.name = request.name
  if (request.expiration !== undefined) values.expiration = request.expiration
  return insertRecord(tx, SecretKey, values, caller)
}

export function removeOwnSecretKey(tx: Tx, caller: Caller, id: string): void {
  const rec = tx.state.get(SecretKey.type, id)
  if (rec === undefined || rec.user !== caller.userId) throw notFound(SecretKey.type, id)
  removeForGood(tx, SecretKey, rec)
}
