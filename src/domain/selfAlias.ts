/*
 * The words a path may say in place of an object id to mean the caller's
 * own object: `users/@self` is the caller's user, `accounts/@own` the
 * tenant's one account. An alias stands for the id everywhere an id may
 * stand (read, update, delete, `$set`, actions, inner collections), so
 * `GET users/@self` answers exactly what `GET users/{id}` answers: the
 * object, never a list. The user id is the caller's; the account id is read
 * from the state (it never changes once the tenant is signed up).
 */
import { findAccount } from './account.js'
import type { StateView } from './tx.js'

const ALIAS_OF_TYPE: Readonly<Record<string, string>> = { User: '@self', Account: '@own' }

/** Whether `word` is the self alias of resources of `type`. */
export function isSelfAlias(type: string, word: string): boolean {
  return ALIAS_OF_TYPE[type] === word
}

/** The id the alias stands for (isSelfAlias said yes), or null when the tenant has no such object. */
export function aliasedId(state: StateView, type: string, callerId: string): string | null {
  if (type === 'User') return callerId
  return findAccount(state)?.id ?? null
}
