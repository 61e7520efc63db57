/*
 * Ending a user's sessions.
 *
 * When the user can no longer sign in — deactivated (`active` false), moved
 * to the trash, or removed — every AuthToken, pending PasswordConfirmation
 * and the calendar secret (calendarSecrets.ts) of the user is deleted in
 * the same write, so reactivating or restoring the user does not bring an
 * old token or calendar URL back.
 * (authenticate.ts refuses tokens of such users anyway; this keeps the
 * state clean and the refusal permanent.)
 *
 * When the password changes, by any path (PUT or a batch item on the User,
 * step 2 of the password change), every access and refresh token of the
 * user ends in that same write — one logged command — except the pair of
 * the session that made the change (`by`: a user who changes their own
 * password stays signed in there; an admin's token is not the user's, so
 * all of the user's end), and pending password confirmations are dropped.
 * Both run in User's onChange hook (passwordRules.ts, which also decides
 * who may set a password and revokes the secret keys on a reset).
 */
import type { Tx } from './tx.js'
import type { ChangeSession, Rec } from './schema.js'
import { removeAllOfUser } from './userRecords.js'

export const SESSION_TYPES = ['AuthToken', 'PasswordConfirmation', 'CalendarSecret'] as const

function maySignIn(user: Rec | undefined): boolean {
  return user !== undefined && user.active === true && user.trashItem === null
}

function endSessionsOf(tx: Tx, userId: string): void {
  for (const type of SESSION_TYPES) removeAllOfUser(tx, type, userId)
}

/** Ends every token of a user except the access token `keepId` and its refresh token. */
function revokeTokensOf(tx: Tx, userId: string, keepId: string | null = null): void {
  if (keepId === null) removeAllOfUser(tx, 'AuthToken', userId)
  else removeAllOfUser(tx, 'AuthToken', userId, { spare: (rec) => rec.id === keepId || rec.pairId === keepId })
}

/** Drops the user's pending password confirmations. */
export function dropConfirmationsOf(tx: Tx, userId: string): void {
  removeAllOfUser(tx, 'PasswordConfirmation', userId)
}

/** For User's onChange hook: a lock-out ends every session; a new password ends every other one. */
export function endSessionsOnUserChange(tx: Tx, before: Rec, after: Rec | undefined, by: ChangeSession | null = null): void {
  if (maySignIn(before) && !maySignIn(after)) {
    endSessionsOf(tx, before.id)
    return
  }
  if (after !== undefined && after.password !== before.password) {
    revokeTokensOf(tx, before.id, by?.tokenId ?? null)
    dropConfirmationsOf(tx, before.id)
  }
}
