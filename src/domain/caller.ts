/*
 * Who asks for an operation, as the domain sees them: a user id and whether
 * the user may do everything in the tenant (the account owner or an admin).
 * The HTTP layer's Principal (http/call.ts) is such a caller; internal writes
 * have none (null where a caller is optional). A signed-in user is a
 * superuser when they own the account or are an admin (callerOfUser).
 */
import { accountOf } from './account.js'
import type { Rec } from './record.js'
import type { StateView } from './tx.js'

export interface Caller {
  readonly userId: string
  readonly superuser: boolean
}

/**
 * The caller a user of the tenant is once signed in with the token `tokenId` (its SHA-256): a superuser when the
 * account owner or an admin. Made once per request, as the one object the request keeps.
 */
export function callerOfUser(state: StateView, user: Rec, tokenId: string): Caller & { readonly isOwner: boolean; readonly tokenId: string } {
  const isOwner = accountOf(state).owner === user.id
  return { userId: user.id, superuser: isOwner || user.admin === true, isOwner, tokenId }
}
