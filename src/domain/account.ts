/*
 * The tenant's one Account record: every tenant has exactly one from its
 * sign-up on (a tenant being created, or cleared after an expired sign-up,
 * has none for the length of that write).
 */
import { assertionFailed } from '../assert.js'
import type { Rec } from './record.js'
import type { StateView } from './tx.js'

/** The account, if the tenant has one yet. */
export function findAccount(state: StateView): Rec | undefined {
  for (const account of state.collection('Account').values()) return account
  return undefined
}

/** The account; a tenant without one is a broken invariant (a failed assertion, a 500). */
export function accountOf(state: StateView): Rec {
  const account = findAccount(state)
  if (account === undefined) assertionFailed(`tenant ${state.tenant} has no account`)
  return account
}
