/*
 * `users/{id}/$setEmail`: the one way to change a user's e-mail,
 * which a PUT may not touch (it is set once). The address is kept as every
 * e-mail is (trimmed, lower case) and held to the field's rules: the Email
 * constraint and uniqueness among the tenant's live users (412 TL01-1104),
 * checked by the change itself (changeFields, as an update with no
 * version). Who may: as for any other change of a User (policy.ts: the user
 * themself, the owner and admins; the owner's User only the owner). The
 * e-mail is the login from this write on; sessions go on. The cross-tenant
 * e-mail index learns both the new address and the old one from the write
 * (tenants/globalIndexes.ts reads the record each put replaced).
 */
import type { Caller } from '../caller.js'
import type { ChangeSession, Rec, ResourceDecl } from '../schema.js'
import type { Tx } from '../tx.js'
import { normalEmail } from '../values.js'
import { changeFields } from './updateObject.js'

export function setUserEmail(tx: Tx, caller: Caller & ChangeSession, decl: ResourceDecl, id: string, address: string): Rec {
  return changeFields(tx, caller, decl, id, { email: normalEmail(address) })
}
