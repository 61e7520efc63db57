/*
 * Issuing tokens inside a write: an access token and a refresh token, each
 * stored as an AuthToken keyed by its SHA-256. The token texts are made
 * before the write and returned to the caller only.
 */
import { newToken, secretId } from '../../domain/credentials.js'
import type { Rec } from '../../domain/schema.js'
import type { WriteTx } from '../../engine/writeTx.js'
import { OutDate } from '../../domain/values.js'

export interface IssuedTokens {
  token: string
  expiration: OutDate
  refreshToken: string
  refreshExpiration: OutDate
}

export function issueTokens(tx: WriteTx, userId: string, accessLifetimeMs: number, refreshLifetimeMs: number): IssuedTokens {
  const token = newToken()
  const refreshToken = newToken()
  const accessId = secretId(token)
  const expiresAt = tx.now + accessLifetimeMs
  const refreshExpiresAt = tx.now + refreshLifetimeMs
  const authToken = (id: string, kind: string, until: number, pairId: string | null): Rec => ({ id, version: 1, createdAt: tx.now, updatedAt: tx.now, trashItem: null, user: userId, kind, expiresAt: until, pairId })
  tx.put('AuthToken', authToken(accessId, 'access', expiresAt, null))
  tx.put('AuthToken', authToken(secretId(refreshToken), 'refresh', refreshExpiresAt, accessId))
  return { token, expiration: new OutDate(expiresAt), refreshToken, refreshExpiration: new OutDate(refreshExpiresAt) }
}

/** Removes expired tokens of a user, so tokens do not pile up in memory. */
export function dropExpiredTokens(tx: WriteTx, userId: string): void {
  for (const rec of [...tx.state.collection('AuthToken').lookup('user', userId)]) {
    if ((rec.expiresAt as number) <= tx.now) tx.del('AuthToken', rec.id)
  }
}
