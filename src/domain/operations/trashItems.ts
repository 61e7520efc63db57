/*
 * The trash's own operations: restoring an item (and its cascade group) and
 * emptying it for good (trash.ts has the mechanism). An item the caller may
 * not see (its deleted object is hidden from them) is not found; either
 * operation needs the right to delete that object, the right the delete
 * itself needed, and — like the delete — the object outside a locked
 * period unless the caller is a superuser (locks.ts).
 */
import type { Caller } from '../caller.js'
import { notFound } from '../errors.js'
import { canSee, checkRemove } from '../policy.js'
import type { Rec, ResourceDecl } from '../schema.js'
import { emptyTrashItem, restoreFromTrash, trashedObject } from '../trash.js'
import type { StateView, Tx } from '../tx.js'
import { checkNotLocked } from './locks.js'

/** 404 unless the caller sees the trash item; 403 unless they may delete its object; 412 when the object is locked. */
function mayHandle(caller: Caller, itemDecl: ResourceDecl, state: StateView, id: string): void {
  const item = state.get(itemDecl.type, id)
  if (item === undefined || !canSee(caller, itemDecl, item, state)) throw notFound(itemDecl.type, id)
  const { decl, rec } = trashedObject(state, item)
  checkRemove(caller, decl, rec, state)
  checkNotLocked(state, caller, decl, rec, undefined)
}

/** Brings the item's object (and its group) back; returns the restored object and its declaration. */
export function restoreTrashItem(tx: Tx, caller: Caller, itemDecl: ResourceDecl, id: string): { decl: ResourceDecl; rec: Rec } {
  mayHandle(caller, itemDecl, tx.state, id)
  return restoreFromTrash(tx, id)
}

export function emptyTrash(tx: Tx, caller: Caller, itemDecl: ResourceDecl, id: string): void {
  mayHandle(caller, itemDecl, tx.state, id)
  emptyTrashItem(tx, id)
}
