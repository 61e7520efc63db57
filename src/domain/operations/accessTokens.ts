/*
 * The caller's sessions as `users/@self/accesstokens` shows them.
 *
 * A session is one access token (an AuthToken of kind `access`, keyed by the
 * SHA-256 of its text) and the refresh token issued with it (`pairId`).
 * Neither text is stored, so neither can be shown; the session is named by
 * a public id derived from the token's hash (deterministicId of it: a UUID
 * like every id, from which neither the text nor the hash can be recovered),
 * so the id a client sees is no key to anything but this list and its
 * DELETE. A session is listed while it can still be used: its access token
 * has not expired, or its refresh token still works (at most 1000, the
 * newest, like every list). Only the caller's own
 * tokens are read (the `user` index of AuthToken): another user's sessions
 * are never listed and never found by DELETE (404, as for anything else the
 * caller cannot see). Revoking a session removes both tokens in one write
 * (endSession); revoking the caller's current one is a logout.
 */
import type { Caller } from '../caller.js'
import { notFound } from '../errors.js'
import { deterministicId } from '../hashId.js'
import type { Rec } from '../record.js'
import { AuthToken } from '../resources/authToken.js'
import type { StateView, Tx } from '../tx.js'
import { OutDate } from '../values.js'
import { endSession } from './tokens.js'

/** The resource type name a session shows as (error messages, XML). */
const ACCESS_TOKEN_TYPE = 'AccessToken'

/** The most sessions one list shows (the list cap of every list). */
const MAX_LISTED_SESSIONS = 1000

/** One session as the list shows it. */
export interface AccessTokenView {
  id: string
  displayName: string
  createdAt: OutDate
  expiration: OutDate
  /** When the refresh token of the session stops working; null once it was used or removed. */
  refreshExpiration: OutDate | null
  /** Whether this is the token of the request that lists it. */
  current: boolean
}

/** A caller who came with an access token: `tokenId` is its AuthToken id (its hash). */
export interface SessionCaller extends Caller {
  readonly tokenId: string
}

/** The public id of the access token whose AuthToken id (its hash) is `tokenId`. */
export function accessTokenPublicId(tokenId: string): string {
  return deterministicId('accesstoken', tokenId)
}

/** The caller's usable sessions at `nowMs`, oldest first (at most MAX_LISTED_SESSIONS, the newest of them). */
export function listAccessTokens(state: StateView, caller: SessionCaller, nowMs: number): AccessTokenView[] {
  const tokens = [...state.collection(AuthToken.type).lookup('user', caller.userId)]
  const refreshOf = new Map<unknown, Rec>()
  for (const rec of tokens) if (rec.kind === 'refresh') refreshOf.set(rec.pairId, rec)
  const sessions: AccessTokenView[] = []
  for (const rec of tokens) {
    if (rec.kind !== 'access') continue
    const refresh = refreshOf.get(rec.id)
    const refreshUsable = refresh !== undefined && (refresh.expiresAt as number) > nowMs
    if ((rec.expiresAt as number) <= nowMs && !refreshUsable) continue
    sessions.push({
      id: accessTokenPublicId(rec.id),
      displayName: rec.id === caller.tokenId ? 'current session' : 'session',
      createdAt: new OutDate(rec.createdAt),
      expiration: new OutDate(rec.expiresAt as number),
      refreshExpiration: refresh === undefined ? null : new OutDate(refresh.expiresAt as number),
      current: rec.id === caller.tokenId,
    })
  }
  sessions.sort((a, b) => a.createdAt.ms - b.createdAt.ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return sessions.length > MAX_LISTED_SESSIONS ? sessions.slice(-MAX_LISTED_SESSIONS) : sessions
}

/** Ends the caller's session with the public id `publicId`; whether it was the caller's current one. 404 when the caller has none such. */
export function revokeAccessToken(tx: Tx, caller: SessionCaller, publicId: string): { current: boolean } {
  for (const rec of tx.state.collection(AuthToken.type).lookup('user', caller.userId)) {
    if (rec.kind !== 'access' || accessTokenPublicId(rec.id) !== publicId) continue
    const current = rec.id === caller.tokenId
    endSession(tx, caller.userId, rec.id)
    return { current }
  }
  throw notFound(ACCESS_TOKEN_TYPE, publicId)
}
