/*
 * Ending a user's sessions when the user can no longer sign in: deactivated
 * (`active` false), moved to the trash, or removed. Every AuthToken and
 * pending PasswordConfirmation of the user is deleted in the same write, so
 * reactivating or restoring the user does not bring an old token back.
 * (authenticate.ts refuses tokens of such users anyway; this keeps the
 * state clean and the refusal permanent.) Wired as User's onChange hook.
 */
import type { WriteTx } from '../engine/writeTx.js'
import type { Rec } from './schema.js'

export const SESSION_TYPES = ['AuthToken', 'PasswordConfirmation'] as const

function maySignIn(user: Rec | undefined): boolean {
  return user !== undefined && user.active === true && user.trashItem === null
}

export function endSessionsOf(tx: WriteTx, userId: string): void {
  for (const type of SESSION_TYPES) {
    for (const rec of [...tx.state.collection(type).lookup('user', userId)]) tx.del(type, rec.id)
  }
}

/** OnChange hook of User: a user who could sign in and no longer can loses every session. */
export function endSessionsWhenLockedOut(tx: WriteTx, before: Rec, after: Rec | undefined): void {
  if (maySignIn(before) && !maySignIn(after)) endSessionsOf(tx, before.id)
}
