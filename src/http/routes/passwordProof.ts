/*
 * The proof of the current password that a change of one's own password
 * or e-mail needs (domain/passwordRules.ts): the body's `currentPassword`, checked
 * here, outside the tenant's mailbox (Argon2id is slow), against the hash
 * the user has now. The check counts in the login limits of that user's
 * e-mail and the caller's address (rateLimiter.ts: a wrong one is a failed
 * login, a right one gives its count back), so a stolen token guesses the
 * password no faster than a login could, and past a limit the answer is
 * 429 as for a login. A wrong one is refused at once (403 TL01-1008); a
 * right one becomes the session's KnownPassword, which the write checks is
 * still the user's password. A request that names no current password, or
 * changes another user's, goes on without proof: the domain decides
 * whether it needs one.
 */
import { checkPassword } from '../../domain/credentials.js'
import { accessDenied } from '../../domain/errors.js'
import { isPlainObject } from '../../domain/input.js'
import { CURRENT_PASSWORD_FIELD } from '../../domain/passwordRules.js'
import type { KnownPassword } from '../../domain/schema.js'
import { parseBody } from '../body.js'
import type { Call, Principal } from '../call.js'
import { reserveLoginAttempt } from '../rateLimiter.js'

/** The `currentPassword` of an action's body (never of its query: a query is logged), if it has one. */
export function currentPasswordIn(call: Call): unknown {
  const { value } = parseBody(call.request)
  return isPlainObject(value) ? value[CURRENT_PASSWORD_FIELD] : undefined
}

/** The caller's session, with the proof of their password when `currentPassword` is given for their own User `userId`. */
export async function withKnownPassword(call: Call, principal: Principal, userId: string, currentPassword: unknown): Promise<Principal & { knownPassword?: KnownPassword }> {
  if (currentPassword === undefined || currentPassword === null || userId !== principal.userId) return principal
  const tenant = call.tenant
  if (tenant === null) return principal
  const user = await tenant.inspect((state) => state.get('User', userId))
  const stored = typeof user?.password === 'string' ? user.password : undefined
  const attempt = await reserveLoginAttempt(call, typeof user?.email === 'string' ? user.email : '')
  let matches = false
  try {
    matches = typeof currentPassword === 'string' && (await checkPassword(currentPassword, stored, call.services.config.passwordCost)).matches
  } finally {
    attempt.settle(matches)
  }
  if (!matches || user === undefined || stored === undefined) throw accessDenied('currentPassword is not your password')
  return { ...principal, knownPassword: { userId, hash: stored, version: user.version } }
}
