/*
 * Login, refresh and logout on a tenant URL (the rules are the domain's:
 * domain/operations/login.ts and tokens.ts).
 *
 * Login: API key plus Basic `email:password` (or a secret key with an empty
 * password). The password is checked (Argon2id, credentials.ts) outside the
 * tenant's mailbox, between the read that finds whom the credentials name
 * and the write that checks again and issues the tokens; a check that
 * re-hashed the password hands the new hash to that write. Every attempt is
 * counted in its login limits (per name and address, and for sources that
 * did not log in lately per name and per address) before its password is
 * checked and given back when the password was right (rateLimiter.ts): past
 * a limit of failures a login is refused with 429 before any password is
 * checked.
 */
import { ApiError } from '../../domain/errors.js'
import { normalEmail } from '../../domain/values.js'
import { checkPassword } from '../../domain/credentials.js'
import { findCandidate, signIn, type Candidate } from '../../domain/operations/login.js'
import { endSession, refreshTokens } from '../../domain/operations/tokens.js'
import type { Call } from '../call.js'
import { reserveLoginAttempt } from '../rateLimiter.js'
import { dataResponse, type ApiResponse } from '../response.js'
import { requireApiKey } from '../apiKey.js'
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

function tenantOf(call: Call) {
  if (call.tenant === null) throw new ApiError('TL01-1005', 'log in on the tenant address')
  return call.tenant
}

export async function login(call: Call): Promise<ApiResponse> {
  requireApiKey(call)
  const tenant = tenantOf(call)
  const credentials = basicCredentials(call)
  const { config } = call.services
  const email = normalEmail(credentials.user)
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
  const lifetimes = { accessMs: config.tokenLifetimeMs, refreshMs: config.refreshTokenLifetimeMs }
  const issued = await tenant.write((tx) => signIn(tx, candidate, rehashed, lifetimes))
  return dataResponse(call.request, issued, { root: 'token' })
}

export async function refresh(call: Call): Promise<ApiResponse> {
  requireApiKey(call)
  const tenant = tenantOf(call)
  const refreshToken = call.request.query.get('refresh_token') ?? ''
  if (refreshToken === '') throw new ApiError('TL01-1011', 'query parameter refresh_token is required')
  const { config } = call.services
  const lifetimes = { accessMs: config.refreshedTokenLifetimeMs, refreshMs: config.refreshTokenLifetimeMs }
  const issued = await tenant.write((tx) => refreshTokens(tx, refreshToken, lifetimes))
  return dataResponse(call.request, issued, { root: 'token' })
}

/** Ends the calling token (and the refresh token issued with it). */
export async function logout(call: Call): Promise<ApiResponse> {
  const tenant = tenantOf(call)
  const { principal } = requireSession(call)
  await tenant.write((tx) => endSession(tx, principal.userId, principal.tokenId))
  return dataResponse(call.request, { loggedOut: true }, { root: 'result' })
}
