/*
 * Who may set a user's password (and e-mail, the login), and what a new
 * password takes with it, so that a stolen access token cannot become the
 * account for good.
 *
 * A change is the user's own when it is made in their own session (a PUT
 * or batch item on their User, `$setEmail`, or step 2 of a confirmation
 * they asked for themself). A change of one's own password or e-mail needs
 * the current password: the request's `currentPassword`, checked before
 * the write (http/routes/passwordProof.ts) and handed in as the session's
 * KnownPassword, which must still be the user's password when the write
 * runs (the same hash, or the same User version: a login that re-hashed
 * the password meanwhile keeps the version). Without it, or with a wrong
 * one, 403 TL01-1008. The e-mail is in the rule because it is where a
 * password reset is mailed: a token that could move it could reset the
 * password next. After a new password the user's own session stays;
 * every other one ends (sessions.ts).
 *
 * Any other change is a reset: by the owner or an admin (a PUT of the
 * user), or by whoever holds a confirmation id that went by mail. A reset
 * ends every session of the user and revokes every secret key of theirs
 * too (secretKeys.ts): whoever resets may be taking the account back from
 * someone who held a credential, and a secret key made with a stolen token
 * would otherwise outlive it.
 *
 * Both are User's onChange hook (userChanged), so every path that stores a
 * new password passes here.
 */
import { accessDenied } from './errors.js'
import type { ChangeSession, KnownPassword, Rec } from './schema.js'
import { revokeSecretKeysOf } from './secretKeys.js'
import { endSessionsOnUserChange } from './sessions.js'
import type { Tx } from './tx.js'

/** The body field that carries the current password. */
export const CURRENT_PASSWORD_FIELD = 'currentPassword'

/** Whether `known` proves the user's password as `user` holds it now. */
function provesPassword(user: Rec, known: KnownPassword | undefined): boolean {
  return known !== undefined && known.userId === user.id && typeof user.password === 'string' && (known.hash === user.password || known.version === user.version)
}

/** The fields that sign a user in, or reset their password: one's own change of them needs the current password. */
const SIGN_IN_FIELDS = ['password', 'email'] as const

/** 403 unless `known` proves the user's current password (a change of one's own password or e-mail, or asking for one). */
export function checkOwnPasswordProof(user: Rec, known: KnownPassword | undefined): void {
  if (!provesPassword(user, known)) {
    throw accessDenied(`changing your own password or e-mail needs your current password: send it as ${CURRENT_PASSWORD_FIELD}`)
  }
}

/** Whether a change of `before` is made in that user's own session. */
function ownChange(before: Rec, by: ChangeSession | null | undefined): by is ChangeSession {
  return by !== null && by !== undefined && by.userId === before.id
}

/**
 * User's onChange hook: one's own new password or e-mail needs the proof; a new password by anyone else is a reset
 * (keys revoked); then the sessions it ends (sessions.ts).
 */
export function userChanged(tx: Tx, before: Rec, after: Rec | undefined, by: ChangeSession | null = null): void {
  if (after !== undefined) {
    const own = ownChange(before, by)
    if (own && SIGN_IN_FIELDS.some((name) => after[name] !== before[name])) checkOwnPasswordProof(before, by.knownPassword)
    if (!own && after.password !== before.password) revokeSecretKeysOf(tx, before.id)
  }
  endSessionsOnUserChange(tx, before, after, by)
}
