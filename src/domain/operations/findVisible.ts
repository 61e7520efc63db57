/*
 * The read every operation on one object starts with: the object as the
 * caller may see it. An object in the trash is not found among the live
 * ones (and a live one not among the trashed), and an object the caller may
 * not see (policy.ts) does not exist for them: both are 404.
 */
import type { Caller } from '../caller.js'
import { notFound } from '../errors.js'
import { canSee } from '../policy.js'
import type { Rec, ResourceDecl } from '../schema.js'
import type { StateView } from '../tx.js'

/** A live (or with `inTrash`, a trashed), visible object, or 404. */
export function findVisible(state: StateView, caller: Caller, decl: ResourceDecl, id: string, inTrash = false): Rec {
  const rec = state.get(decl.type, id)
  if (rec === undefined || (rec.trashItem !== null) !== inTrash || !canSee(caller, decl, rec, state)) throw notFound(decl.type, id)
  return rec
}
