/*
 * Calendar secrets: what opens a user's calendar feed in a calendar
 * application (resources/calendarSecret.ts). The text is random like a
 * token (credentials.ts: 43 characters of nanoid, 256 bits), decided before
 * the write and shown once, in the answer that made it; the record keeps
 * only its SHA-256, as its id, so the feed finds it by hash and no secret
 * is compared byte by byte. Making a secret replaces the user's earlier one
 * (rotation: the old URL stops working in that write); removing it revokes
 * the feed's URL. A user who can no longer sign in — deactivated, trashed,
 * removed — loses the secret with their sessions (sessions.ts), and a
 * password reset (by an admin or by mail) takes it too (passwordRules.ts):
 * the URL does not come back when the user does.
 */
import { newToken, secretId } from './credentials.js'
import { CalendarSecret } from './resources/calendarSecret.js'
import type { Rec } from './schema.js'
import type { StateView, Tx } from './tx.js'
import { removeAllOfUser } from './userRecords.js'

export function newCalendarSecret(): string {
  return newToken()
}

/** The user's secret, if they have one. */
export function calendarSecretOf(state: StateView, userId: string): Rec | undefined {
  for (const rec of state.collection(CalendarSecret.type).lookup('user', userId)) return rec
  return undefined
}

/** Removes the user's secret (every one, should there be several). */
export function revokeCalendarSecretsOf(tx: Tx, userId: string): void {
  removeAllOfUser(tx, CalendarSecret.type, userId)
}

/** The user a secret text stands for, when that user may still sign in; null for any other text. */
export function calendarSecretUser(state: StateView, text: string): Rec | null {
  const rec = state.get(CalendarSecret.type, secretId(text))
  const user = rec === undefined ? undefined : state.get('User', rec.user as string)
  if (user === undefined || user.active !== true || user.trashItem !== null) return null
  return user
}
