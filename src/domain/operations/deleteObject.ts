/*
 * Deleting an object: to the trash with its cascade (trash.ts), or with
 * `hard` — or for a resource `removedForGood` (a secret key) — for good,
 * trashed or not. Either needs the object visible to the caller, or
 * revocable by them unseen (policy.ts mayRevoke), else 404, and the right
 * to remove it (policy.ts), and the object outside a locked period unless
 * the caller is a superuser (locks.ts). The result says which happened:
 * the trash item the object went to, or none.
 */
import type { Caller } from '../caller.js'
import { ApiError, notFound } from '../errors.js'
import { canSee, checkRemove, mayRevoke } from '../policy.js'
import type { ResourceDecl } from '../schema.js'
import { moveToTrash, removeForGood } from '../trash.js'
import type { Tx } from '../tx.js'
import { checkNotLocked } from './locks.js'

/** The trash item's id; null when the object was removed for good. */
export type Deleted = { readonly trashItemId: string | null }

/** Refuses the delete of a resource that cannot be deleted, before any write. */
export function checkRemovable(decl: ResourceDecl): void {
  if (!decl.removable) throw new ApiError('TL01-1103', `${decl.type} objects cannot be deleted`)
}

export function deleteObject(tx: Tx, caller: Caller, decl: ResourceDecl, id: string, hard: boolean): Deleted {
  const rec = tx.state.get(decl.type, id)
  const reachable = rec !== undefined && (hard || rec.trashItem === null) && (canSee(caller, decl, rec, tx.state) || mayRevoke(caller, decl, rec, tx.state))
  if (!reachable) throw notFound(decl.type, id)
  checkRemove(caller, decl, rec, tx.state)
  checkNotLocked(tx.state, caller, decl, rec, undefined)
  if (hard || decl.removedForGood) {
    removeForGood(tx, decl, rec)
    return { trashItemId: null }
  }
  return { trashItemId: moveToTrash(tx, decl, rec, caller.userId).id }
}
