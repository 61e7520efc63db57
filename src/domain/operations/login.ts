/*
 * A login in two parts around the password check, which is slow and runs
 * outside the tenant's mailbox. First a read finds whom the credentials
 * name: the live user with the e-mail (a trashed one with the same e-mail
 * is ignored), or — with an empty password — the owner of a secret key.
 * Then, once the password is verified, a write checks that the user (and
 * the key) is still the one that was verified and may sign in (a key
 * past its `expiration` no longer does), stores a
 * new hash of the password when the check made one (an older kind or cost;
 * without a new version: nothing a client sees changed), drops the user's
 * expired tokens and issues a pair (tokens.ts).
 */
import type { Rec } from '../schema.js'
import { ApiError } from '../errors.js'
import { isLive } from '../recordMaking.js'
import { liveUserWithEmail } from '../resources/user.js'
import { findSecretKey } from '../secretKeys.js'
import type { StateView, Tx } from '../tx.js'
import { checkCanSignIn, dropExpiredTokens, issueTokens, type IssuedTokens, type TokenLifetimes } from './tokens.js'

/** Who a login names: a user by e-mail, or (with an empty password) the owner of a secret key. */
export interface Candidate {
  user: Rec
  /** The secret key that names the user; null for a password login. */
  keyId: string | null
}

/** `credentials.user` is the login name as sent, `email` that name as an e-mail address (trimmed, lower case). */
export function findCandidate(state: StateView, credentials: { user: string; password: string }, email: string): Candidate | undefined {
  const byEmail = liveUserWithEmail(state, email)
  if (byEmail !== undefined) return { user: byEmail, keyId: null }
  if (credentials.password !== '') return undefined
  const key = findSecretKey(state, credentials.user)
  if (key === undefined) return undefined
  const user = state.get('User', key.user as string)
  return user === undefined ? undefined : { user, keyId: key.id }
}

/**
 * The user as verified, or 401 if the password or the key changed since. A
 * login that re-hashed the password meanwhile stored a new hash of the same
 * password without a new version (a password change makes one), so a hash
 * that differs at the same version is the same password.
 */
function verifiedUser(state: StateView, candidate: Candidate): Rec {
  const user = state.get('User', candidate.user.id)
  const keyUser = candidate.keyId === null ? undefined : state.get('SecretKey', candidate.keyId)?.user
  const samePassword = user !== undefined && (user.password === candidate.user.password || user.version === candidate.user.version)
  const unchanged = candidate.keyId === null ? samePassword : keyUser === candidate.user.id && isLive({ state }, 'SecretKey', candidate.keyId)
  if (user === undefined || !unchanged) throw new ApiError('TL01-1001', 'wrong credentials')
  return user
}

/** 401 when the secret key's expiration has come. */
function refuseExpiredKey(tx: Tx, keyId: string): void {
  const expiration = tx.state.get('SecretKey', keyId)?.expiration
  if (typeof expiration === 'number' && expiration <= tx.now) throw new ApiError('TL01-1001', 'wrong credentials: the secret key expired')
}

/** The write of a verified login; `rehashed` is the password's new hash when the check made one. */
export function signIn(tx: Tx, candidate: Candidate, rehashed: string | null, lifetimes: TokenLifetimes): IssuedTokens {
  const user = verifiedUser(tx.state, candidate)
  if (candidate.keyId !== null) refuseExpiredKey(tx, candidate.keyId)
  checkCanSignIn(tx.state, user)
  if (rehashed !== null && user.password === candidate.user.password) tx.put('User', { ...user, password: rehashed })
  dropExpiredTokens(tx, user.id)
  return issueTokens(tx, user.id, lifetimes)
}
