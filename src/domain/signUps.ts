/*
 * Sign-ups waiting for their confirmation. Sign-up founds a tenant whose
 * Account and owner are unconfirmed; the confirmation must come within
 * SIGNUP_CONFIRMATION_LIFETIME_MS of the account's `createdAt` (the time of
 * the sign-up's write, in its log entry). Past that the sign-up has
 * expired: it cannot be confirmed, and its address and owner e-mail are
 * free (the public calls read the tenant directory for that,
 * tenantRegistry.ts). A new sign-up of the same address clears the expired
 * one inside its own write — the decision uses that write's time, so
 * replaying the log gives the same state — and founds the new account.
 */
import type { StateView, Tx } from './tx.js'
import { findAccount } from './account.js'
import { ApiError } from './errors.js'

/** Whether the tenant's account is a sign-up that was not confirmed within `lifetimeMs` before `nowMs`. */
export function signUpExpired(state: StateView, lifetimeMs: number, nowMs: number): boolean {
  const account = findAccount(state)
  return account !== undefined && account.confirmed !== true && (account.createdAt as number) + lifetimeMs <= nowMs
}

/** Inside a new sign-up's write: removes every record an expired sign-up left; 409 if it did not expire (after all). */
export function clearExpiredSignUp(tx: Tx, lifetimeMs: number): void {
  if (!signUpExpired(tx.state, lifetimeMs, tx.now)) throw new ApiError('TL01-1102', `the account address '${tx.state.tenant}' is taken`)
  for (const [type, collection] of tx.state.collections) {
    for (const rec of [...collection.values()]) tx.del(type, rec.id)
  }
}
