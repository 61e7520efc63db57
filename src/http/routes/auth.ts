/*
 * Login, refresh and logout on a tenant URL.
 *
 * Login: API key plus Basic `email:password` (or a secret key with an empty
 * password). The password is checked (Argon2id, credentials.ts) outside the
 * tenant's mailbox; the tokens are issued in a write that checks again that
 * the user (and the secret key) is still the one that was verified. When the
 * stored hash is of an older kind or cost, the password was hashed again
 * before the write, and that write stores the new hash too (without a new
 * version: nothing a client sees changed). A login names
 * the live user with the e-mail (a trashed one with the same e-mail is
 * ignored). Every attempt is counted in its login limits (per name and
 * address, and for sources that did not log in lately per name and per
 * address) before its password is checked and given back when the password
 * was right (rateLimiter.ts): past a limit of failures a login is refused
 * with 429 before any password is checked.
 * Refresh consumes the refresh token in the same write that issues the new
 * pair, so it works exactly once; the access token it was issued with keeps
 * working until it expires or its user logs out.
 */
import { ApiError } from '../../domain/errors.js'
import { checkPassword, secretId } from '../../domain/credentials.js'
import { isLive } from '../../domain/records.js'
import { liveUserWithEmail } from '../../domain/resources/user.js'
import { findSecretKey } from '../../domain/secretKeys.js'
import type { Rec } from '../../domain/schema.js'
import type { TenantState } from '../../engine/tenantState.js'
import { accountOf } from '../authenticate.js'
import type { Call } from '../call.js'
import { reserveLoginAttempt } from '../rateLimiter.js'
import { dataResponse, type ApiResponse } from '../response.js'
import { requireApiKey } from '../apiKey.js'
import { dropExpiredTokens, issueTokens } from './tokens.js'
import { requireSession } from '../requireSession.js'

/** The `user:password` of an `Authorization: Basic` header; null when there is none or it is malformed. */
export function basicPair(call: Call): { user: string; password: string } | null {
  const header = call.request.headers.get('authorization') ?? ''
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header)
  if (match === null) return null
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

function basicCredentials(call: Call): { user: string; password: string } {
  const pair = basicPair(call)
  if (pair === null) throw new ApiError('TL01-1001', 'login needs an Authorization: Basic header with user:password')
  return pair
}

/** Who a login names: a user by e-mail, or (with an empty password) the owner of a secret key. */
interface Candidate {
  user: Rec
  /** The secret key that names the user; null for a password login. */
  keyId: string | null
}

function findCandidate(state: TenantState, credentials: { user: string; password: string }, email: string): Candidate | undefined {
  const byEmail = liveUserWithEmail(state, email)
  if (byEmail !== undefined) return { user: byEmail, keyId: null }
  if (credentials.password !== '') return undefined
  const key = findSecretKey(state, credentials.user)
  if (key === undefined) return undefined
  const user = state.get('User', key.user as string)
  return user === undefined ? undefined : { user, keyId: key.id }
}

/**
 * Inside the write: the user as verified, or 401 if the password or the key
 * changed since. A login that re-hashed the password meanwhile stored a new
 * hash of the same password without a new version (a password change makes
 * one), so a hash that differs at the same version is the same password.
 */
function verifiedUser(state: TenantState, candidate: Candidate): Rec {
  const user = state.get('User', candidate.user.id)
  const keyUser = candidate.keyId === null ? undefined : state.get('SecretKey', candidate.keyId)?.user
  const samePassword = user !== undefined && (user.password === candidate.user.password || user.version === candidate.user.version)
  const unchanged = candidate.keyId === null ? samePassword : keyUser === candidate.user.id && isLive({ state }, 'SecretKey', candidate.keyId)
  if (user === undefined || !unchanged) throw new ApiError('TL01-1001', 'wrong credentials')
  return user
}

function tenantOf(call: Call) {
  if (call.tenant === null) throw new ApiError('TL01-1005', 'log in on the tenant address')
  return call.tenant
}

function checkCanSignIn(state: TenantState, user: Rec): void {
  if (accountOf(state).confirmed !== true || user.confirmed !== true) throw new ApiError('TL01-1007', 'the account or user is not confirmed yet')
  if (user.active !== true || user.trashItem !== null) throw new ApiError('TL01-1001', 'wrong credentials')
}

export async function login(call: Call): Promise<ApiResponse> {
  requireApiKey(call)
  const tenant = tenantOf(call)
  const credentials = basicCredentials(call)
  const { config } = call.services
  const email = credentials.user.trim().toLowerCase()
  const attempt = await reserveLoginAttempt(call, email)
  let candidate: Candidate | undefined
  let verified = false
  let rehashed: string | null = null
  try {
    candidate = await tenant.read((state) => findCandidate(state, credentials, email))
    if (candidate !== undefined && candidate.keyId !== null) verified = true
    else {
      const check = await checkPassword(credentials.password, candidate?.user.password as string | undefined, config.passwordCost)
      verified = check.matches
      rehashed = check.rehashed
    }
  } finally {
    attempt.settle(candidate !== undefined && verified)
  }
  if (candidate === undefined || !verified) throw new ApiError('TL01-1001', 'wrong credentials')
  const issued = await tenant.write((tx) => {
    const user = verifiedUser(tx.state, candidate)
    checkCanSignIn(tx.state, user)
    if (rehashed !== null && user.password === candidate.user.password) tx.put('User', { ...user, password: rehashed })
    dropExpiredTokens(tx, user.id)
    return issueTokens(tx, user.id, config.tokenLifetimeMs, config.refreshTokenLifetimeMs)
  })
  return dataResponse(call.request, issued, { root: 'token' })
}

export async function refresh(call: Call): Promise<ApiResponse> {
  requireApiKey(call)
  const tenant = tenantOf(call)
  const refreshToken = call.request.query.get('refresh_token') ?? ''
  if (refreshToken === '') throw new ApiError('TL01-1011', 'query parameter refresh_token is required')
  const { config } = call.services
  const issued = await tenant.write((tx) => {
    const rec = tx.state.get('AuthToken', secretId(refreshToken))
    if (rec === undefined || rec.kind !== 'refresh') throw new ApiError('TL01-1011', 'the refresh token is invalid or was already used')
    if ((rec.expiresAt as number) <= tx.now) throw new ApiError('TL01-1011', 'the refresh token has expired')
    const user = tx.state.get('User', rec.user as string)
    if (user === undefined) throw new ApiError('TL01-1011', 'the refresh token is invalid')
    checkCanSignIn(tx.state, user)
    tx.del('AuthToken', rec.id)
    dropExpiredTokens(tx, user.id)
    return issueTokens(tx, user.id, config.refreshedTokenLifetimeMs, config.refreshTokenLifetimeMs)
  })
  return dataResponse(call.request, issued, { root: 'token' })
}

/** Ends the calling token (and the refresh token issued with it). */
export async function logout(call: Call): Promise<ApiResponse> {
  const tenant = tenantOf(call)
  const { principal } = requireSession(call)
  await tenant.write((tx) => {
    for (const rec of [...tx.state.collection('AuthToken').lookup('user', principal.userId)]) {
      if (rec.id === principal.tokenId || rec.pairId === principal.tokenId) tx.del('AuthToken', rec.id)
    }
  })
  return dataResponse(call.request, { loggedOut: true }, { root: 'result' })
}
