/*
 * Access and refresh tokens. Issuing makes a pair of random texts inside
 * the write and stores each as an AuthToken keyed by its SHA-256 (the
 * texts go to the caller only, never to the log): the access token, and
 * the refresh token that names it in `pairId`. Refreshing consumes the
 * refresh token in the same write that issues the new pair, so it works
 * exactly once; the access token it was issued with keeps working until it
 * expires or its session ends. Ending a session removes its access token
 * and the refresh token issued with it. Every issue first drops the user's
 * expired tokens, so tokens do not pile up in memory.
 *
 * An access token signs its user in (userOfAccessToken: what
 * http/authenticate.ts asks of every request) while it is an access token,
 * not expired, of a user who is active and outside the trash; anything else
 * is 401 TL01-1010.
 */
import { accountOf } from '../account.js'
import { newToken, secretId } from '../credentials.js'
import { ApiError } from '../errors.js'
import { putKeyedRecord } from '../recordMaking.js'
import { AuthToken } from '../resources/authToken.js'
import { User } from '../resources/user.js'
import type { Rec } from '../schema.js'
import type { StateView, Tx } from '../tx.js'
import { removeAllOfUser } from '../userRecords.js'
import { OutDate } from '../values.js'

export interface IssuedTokens {
  token: string
  expiration: OutDate
  refreshToken: string
  refreshExpiration: OutDate
}

/** How long the tokens of one issue work. */
export interface TokenLifetimes {
  readonly accessMs: number
  readonly refreshMs: number
}

export function issueTokens(tx: Tx, userId: string, lifetimes: TokenLifetimes): IssuedTokens {
  const token = newToken()
  const refreshToken = newToken()
  const accessId = secretId(token)
  const expiresAt = tx.now + lifetimes.accessMs
  const refreshExpiresAt = tx.now + lifetimes.refreshMs
  putKeyedRecord(tx, AuthToken, accessId, { user: userId, kind: 'access', expiresAt, pairId: null })
  putKeyedRecord(tx, AuthToken, secretId(refreshToken), { user: userId, kind: 'refresh', expiresAt: refreshExpiresAt, pairId: accessId })
  return { token, expiration: new OutDate(expiresAt), refreshToken, refreshExpiration: new OutDate(refreshExpiresAt) }
}

/** Removes expired tokens of a user. */
export function dropExpiredTokens(tx: Tx, userId: string): void {
  removeAllOfUser(tx, AuthToken.type, userId, { spare: (rec) => !((rec.expiresAt as number) <= tx.now) })
}

/** 401-class refusal unless the account and the user are confirmed and the user is active and outside the trash. */
export function checkCanSignIn(state: StateView, user: Rec): void {
  if (accountOf(state).confirmed !== true || user.confirmed !== true) throw new ApiError('TL01-1007', 'the account or user is not confirmed yet')
  if (user.active !== true || user.trashItem !== null) throw new ApiError('TL01-1001', 'wrong credentials')
}

/** A new pair for the refresh token `refreshToken` (its text), which is consumed. */
export function refreshTokens(tx: Tx, refreshToken: string, lifetimes: TokenLifetimes): IssuedTokens {
  const rec = tx.state.get(AuthToken.type, secretId(refreshToken))
  if (rec === undefined || rec.kind !== 'refresh') throw new ApiError('TL01-1011', 'the refresh token is invalid or was already used')
  if ((rec.expiresAt as number) <= tx.now) throw new ApiError('TL01-1011', 'the refresh token has expired')
  const user = tx.state.get('User', rec.user as string)
  if (user === undefined) throw new ApiError('TL01-1011', 'the refresh token is invalid')
  checkCanSignIn(tx.state, user)
  tx.del(AuthToken.type, rec.id)
  dropExpiredTokens(tx, user.id)
  return issueTokens(tx, user.id, lifetimes)
}

/**
 * The user the access token `tokenId` (its SHA-256) signs in at `nowMs`, or why it signs in none: of another kind or
 * unknown, expired, or of a user who is inactive or in the trash. The one rule of authenticate.ts and the change feed.
 */
export function accessTokenUser(state: StateView, tokenId: string, nowMs: number): Rec | string {
  const rec = state.get(AuthToken.type, tokenId)
  if (rec === undefined || rec.kind !== 'access') return 'the access token is invalid'
  if ((rec.expiresAt as number) <= nowMs) return 'the access token has expired'
  const user = state.get(User.type, rec.user as string)
  if (user === undefined || user.active !== true || user.trashItem !== null) return 'the user of this token cannot sign in'
  return user
}

/** The user the access token `tokenId` (its SHA-256) signs in at `nowMs`; 401 TL01-1010 when it signs in none. */
export function userOfAccessToken(state: StateView, tokenId: string, nowMs: number): Rec {
  const user = accessTokenUser(state, tokenId, nowMs)
  if (typeof user === 'string') throw new ApiError('TL01-1010', user)
  return user
}

/** Ends the session of the access token `tokenId` (its SHA-256) of the user: it and its refresh token. */
export function endSession(tx: Tx, userId: string, tokenId: string): void {
  removeAllOfUser(tx, AuthToken.type, userId, { spare: (rec) => rec.id !== tokenId && rec.pairId !== tokenId })
}
