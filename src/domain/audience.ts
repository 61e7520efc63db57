/*
 * An audience: who may see a record, said for every caller at once instead
 * of asked caller by caller (policy.ts canSee asks one caller). It is what
 * the change feed decides with: a change's event reaches exactly the
 * subscribers its audience admits (changes.ts), and a record removed for
 * good keeps the audience it had just before its removal in the log entry
 * that removed it (engine/writeTx.ts), because nothing of it is left to
 * judge by afterwards: its `removed` event goes to whoever could see it,
 * live and when a subscriber resumes from the log alike.
 *
 * The audiences are few: everyone in the tenant, the superusers (the owner
 * and admins), nobody, one user, or one user and the superusers. In the
 * log an audience is a short text (`all`, `superusers`, `none`,
 * `user:<id>`, `user+superusers:<id>`); a text this build cannot read is no
 * audience (null), which a reader must judge as unknown.
 */
import type { Caller } from './caller.js'

export type Audience =
  | { readonly kind: 'everyone' }
  | { readonly kind: 'superusers' }
  | { readonly kind: 'nobody' }
  /** `userId` alone; with `superusers`, every superuser too. */
  | { readonly kind: 'user'; readonly userId: string; readonly superusers: boolean }

export const EVERYONE: Audience = { kind: 'everyone' }
export const SUPERUSERS: Audience = { kind: 'superusers' }
export const NOBODY: Audience = { kind: 'nobody' }

/** One user alone (nobody when `userId` is no id: a record that belongs to no one). */
export function onlyUser(userId: unknown): Audience {
  return typeof userId === 'string' ? { kind: 'user', userId, superusers: false } : NOBODY
}

/** One user and the superusers (the superusers alone when `userId` is no id). */
function userAndSuperusers(userId: unknown): Audience {
  return typeof userId === 'string' ? { kind: 'user', userId, superusers: true } : SUPERUSERS
}

/** Whether the audience takes in `caller`. */
export function admits(audience: Audience, caller: Caller): boolean {
  switch (audience.kind) {
    case 'everyone':
      return true
    case 'superusers':
      return caller.superuser
    case 'nobody':
      return false
    case 'user':
      return caller.userId === audience.userId || (audience.superusers && caller.superuser)
  }
}

const USER = 'user:'
const USER_AND_SUPERUSERS = 'user+superusers:'

/** The audience as the log keeps it. */
export function audienceText(audience: Audience): string {
  switch (audience.kind) {
    case 'everyone':
      return 'all'
    case 'superusers':
      return 'superusers'
    case 'nobody':
      return 'none'
    case 'user':
      return `${audience.superusers ? USER_AND_SUPERUSERS : USER}${audience.userId}`
  }
}

/** An audience read back from the log; null for a text this build does not know. */
export function audienceFromText(text: string): Audience | null {
  if (text === 'all') return EVERYONE
  if (text === 'superusers') return SUPERUSERS
  if (text === 'none') return NOBODY
  if (text.startsWith(USER) && text.length > USER.length) return onlyUser(text.slice(USER.length))
  if (text.startsWith(USER_AND_SUPERUSERS) && text.length > USER_AND_SUPERUSERS.length) return userAndSuperusers(text.slice(USER_AND_SUPERUSERS.length))
  return null
}
