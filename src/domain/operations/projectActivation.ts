/*
 * Activating and deactivating a project: an update of `active` that checks
 * no version (like `$set` without one), so permissions and validation apply
 * as to any update.
 */
import type { Caller } from '../caller.js'
import type { ChangeSession, Rec, ResourceDecl } from '../schema.js'
import type { Tx } from '../tx.js'
import { changeFields } from './updateObject.js'

export function setProjectActive(tx: Tx, caller: Caller & ChangeSession, decl: ResourceDecl, id: string, active: boolean): Rec {
  return changeFields(tx, caller, decl, id, { active })
}
