/*
 * Sign-up and its confirmation, as writes of the new tenant. Founding a
 * tenant stores its owner — an active admin, not yet confirmed, with the
 * password's hash (hashed before the write) — and its Account naming that
 * owner, not yet confirmed, its document numbers starting at 0. A tenant
 * name whose sign-up expired unconfirmed is founded again over it: the old
 * records are cleared in the same write (signUps.ts). Confirming by the
 * account id the sign-up answered confirms the account and its owner,
 * unless the sign-up expired.
 */
import { accountOf } from '../account.js'
import { ApiError } from '../errors.js'
import { changeRecord, insertRecord } from '../recordMaking.js'
import { Account } from '../resources/account.js'
import { User } from '../resources/user.js'
import type { Rec } from '../schema.js'
import { clearExpiredSignUp, signUpExpired } from '../signUps.js'
import type { Tx } from '../tx.js'

export interface SignUpValues {
  /** The owner's fields as read from the request, without an id. */
  readonly owner: Record<string, unknown>
  /** The owner's e-mail address (trimmed, lower case; '' for none). */
  readonly email: string
  readonly passwordHash: string
  /** The account's fields as read from the request. */
  readonly account: Record<string, unknown>
  readonly urlPrefix: string
}

/** Stores the owner and the account of a new tenant; returns the account's id. */
export function foundTenant(tx: Tx, values: SignUpValues): string {
  const owner = insertRecord(tx, User, Object.assign({}, values.owner, { email: values.email, password: values.passwordHash, admin: true, active: true, confirmed: false }))
  const account = insertRecord(tx, Account, Object.assign({}, values.account, { urlPrefix: values.urlPrefix, owner: owner.id, confirmed: false, docNumberSequence: 0 }))
  return account.id
}

/** Founds the tenant again over a sign-up that expired unconfirmed `lifetimeMs` after it was made. */
export function refoundTenant(tx: Tx, values: SignUpValues, lifetimeMs: number): string {
  clearExpiredSignUp(tx, lifetimeMs)
  return foundTenant(tx, values)
}

/** Confirms the account `accountId` and its owner; the account after, or null when the tenant's account has another id. */
export function confirmSignUp(tx: Tx, accountId: string, lifetimeMs: number): Rec | null {
  const account = accountOf(tx.state)
  if (account.id !== accountId) return null
  if (signUpExpired(tx.state, lifetimeMs, tx.now)) {
    throw new ApiError('TL01-1006', 'this sign-up was not confirmed in time and has expired; sign up again')
  }
  const owner = tx.state.get('User', account.owner as string)
  const after = account.confirmed === true ? account : changeRecord(tx, Account, account, { confirmed: true })
  if (owner !== undefined && owner.confirmed !== true) changeRecord(tx, User, owner, { confirmed: true })
  return after
}
