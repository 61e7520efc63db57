/*
 * The password change in two steps, as writes of one tenant (the HTTP
 * routes in http/routes/passwordChange.ts say who asks and where the id
 * goes).
 *
 * Step 1 puts a PasswordConfirmation for the user, keyed by the SHA-256 of
 * the confirmation id (decided before the write; the id itself goes to the
 * user or their mailbox, never to the log) and replacing the user's pending
 * one: by e-mail, for the live, active user with that address (nothing when
 * there is none); or for a user named by id, which is a change of the User
 * and passes the same permission check as a PUT of it (policy.ts). When
 * the user asks for themself, they prove their current password as for a
 * change of it (passwordRules.ts) and their session is the one kept
 * (`keepTokenId`).
 *
 * Step 2 consumes the confirmation (once; an expired one is consumed too and
 * refused) and stores the new password's hash (hashed before the write);
 * User's onChange hook (passwordRules.ts, sessions.ts) ends every token of
 * the user except the kept session and drops the other confirmations. A
 * confirmation with a kept session is the user's own change, its proof
 * given at step 1 (a password change since would have dropped the
 * confirmation); one with none is a reset by mail, which also revokes the
 * user's secret keys.
 */
import type { Caller } from '../caller.js'
import { secretId } from '../credentials.js'
import { notFound } from '../errors.js'
import { checkOwnPasswordProof } from '../passwordRules.js'
import { checkWrite } from '../policy.js'
import { changeRecord, putKeyedRecord } from '../recordMaking.js'
import { PasswordConfirmation } from '../resources/passwordConfirmation.js'
import { liveUserWithEmail, User } from '../resources/user.js'
import type { ChangeSession, Rec } from '../schema.js'
import { dropConfirmationsOf } from '../sessions.js'
import type { Tx } from '../tx.js'

/** Replaces the user's pending confirmation (one per user) with a new one. */
function putConfirmation(tx: Tx, userId: string, confirmationId: string, lifetimeMs: number, keepTokenId: string | null): void {
  dropConfirmationsOf(tx, userId)
  putKeyedRecord(tx, PasswordConfirmation, secretId(confirmationId), { user: userId, expiresAt: tx.now + lifetimeMs, keepTokenId })
}

function mayChangePassword(user: Rec | undefined): user is Rec {
  return user !== undefined && user.trashItem === null && user.active === true
}

/** Step 1 by e-mail: true when the tenant has a user with the address who may change their password. */
export function confirmByEmail(tx: Tx, email: string, confirmationId: string, lifetimeMs: number): boolean {
  const user = liveUserWithEmail(tx.state, email)
  if (!mayChangePassword(user)) return false
  putConfirmation(tx, user.id, confirmationId, lifetimeMs, null)
  return true
}

/**
 * Step 1 for the user `userId`, asked by `caller` in their session; `keepSession` keeps the caller's session (the
 * user asks for themself). Returns the user's e-mail address.
 */
export function confirmForUser(tx: Tx, caller: Caller & ChangeSession, userId: string, confirmationId: string, lifetimeMs: number, keepSession: boolean): string {
  const user = tx.state.get('User', userId)
  if (user === undefined || user.trashItem !== null) throw notFound('User', userId)
  checkWrite(caller, User, user, user, tx.state)
  if (keepSession) checkOwnPasswordProof(user, caller.knownPassword)
  putConfirmation(tx, userId, confirmationId, lifetimeMs, keepSession ? caller.tokenId : null)
  return String(user.email)
}

/** Step 2: consumes the confirmation `hash` and sets the password; the changed user, or null when it does not work here. */
export function changePassword(tx: Tx, hash: string, passwordHash: string): Rec | null {
  const confirmation = tx.state.get(PasswordConfirmation.type, hash)
  if (confirmation === undefined) return null
  tx.del(PasswordConfirmation.type, hash)
  const user = tx.state.get('User', confirmation.user as string)
  if ((confirmation.expiresAt as number) <= tx.now || !mayChangePassword(user)) return null
  const keepTokenId = (confirmation.keepTokenId as string | null) ?? null
  // The kept session proved the password at step 1; the confirmation still exists, so it is still the password.
  const knownPassword = { userId: user.id, hash: user.password as string, version: user.version }
  return changeRecord(tx, User, user, { password: passwordHash }, keepTokenId === null ? null : { userId: user.id, tokenId: keepTokenId, knownPassword })
}
