/*
 * `accounts/{id}/$setUrlPrefix`: the account's `urlPrefix` is the
 * tenant's name and host, so changing it moves the tenant to the new name
 * (tenants/tenantRename.ts does the moving). The domain decides what may be
 * asked before anything moves (checkUrlPrefixChange: the owner and admins
 * only; the new prefix as every tenant name must be, lower-cased and
 * trimmed, else 412 TL01-1104 on `urlPrefix`), and the change itself
 * (changeUrlPrefix), which runs as a write on the moved state: the Account
 * at version + 1 with the new `urlPrefix`. Whether the name is free is the
 * tenant layer's to say (409 TL01-1102), in the same exclusive job as the move.
 */
import { accountOf } from '../account.js'
import type { Caller } from '../caller.js'
import { accessDenied, notFound, violation } from '../errors.js'
import { changeRecord } from '../recordMaking.js'
import { Account } from '../resources/account.js'
import type { Rec } from '../schema.js'
import { isValidTenantName, RESERVED_TENANTS, TENANT_NAME_MAX_LENGTH } from '../tenantName.js'
import type { StateView, Tx } from '../tx.js'

/** The form a requested prefix is compared and stored in. */
export function normalUrlPrefix(text: string): string {
  return text.trim().toLowerCase()
}

/** Refuses a change the caller may not make or a prefix no tenant may have; the account as it is. */
export function checkUrlPrefixChange(state: StateView, caller: Caller, accountId: string, urlPrefix: string): Rec {
  const account = accountOf(state)
  if (account.id !== accountId) throw notFound(Account.type, accountId)
  if (!caller.superuser) throw accessDenied('only the account owner and admins change the URL prefix')
  if (!isValidTenantName(urlPrefix)) {
    const message =
      `Account.urlPrefix must be lower-case letters, digits and '-' (not at either end), at most ${TENANT_NAME_MAX_LENGTH} characters, ` +
      `and none of ${[...RESERVED_TENANTS].join(', ')} ('${urlPrefix}' is not)`
    throw violation([{ entityType: Account.type, field: 'urlPrefix', constraint: 'Pattern', message }])
  }
  return account
}

/** The change, on the state that moved to the new name. */
export function changeUrlPrefix(tx: Tx, urlPrefix: string): Rec {
  return changeRecord(tx, Account, accountOf(tx.state), { urlPrefix })
}
