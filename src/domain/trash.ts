/*
 * The trash. Deleting an object moves it and its cascade (the declaration's
 * `cascades`, followed recursively through the references that point back
 * at the deleted object) to the trash in one write: each object gets a
 * TrashItem, all with the group id of the root's trash item. Restoring the
 * root brings the whole group back; restoring a child alone is refused while
 * a parent it cascades from is still in the trash, and restoring is refused
 * as a whole when a restored object would share a unique field set with a
 * live one (the same check as create). Hard deletion and emptying a trash
 * item remove an object for good together with everything of its cascade,
 * live or trashed (a child trashed earlier must not outlive its parent),
 * and their trash items. Trash and restore do not change an object's
 * version: its fields are as they were. Every object that moves runs its
 * declaration's onChange hook.
 */
import { assertionFailed } from '../assert.js'
import { ApiError, notFound } from './errors.js'
import { checkUnique, newId } from './recordMaking.js'
import { findResourceByType, RESOURCES, resourceByType } from './resources/index.js'
import type { Rec, ResourceDecl } from './schema.js'
import type { StateView, Tx } from './tx.js'

const MAX_CASCADE_OBJECTS = 1_000_000

interface Member {
  decl: ResourceDecl
  rec: Rec
}

/** The object and, recursively, every record of its cascade types that refers to it. */
function cascadeOf(state: StateView, decl: ResourceDecl, rec: Rec, includeTrashed: boolean): Member[] {
  const members: Member[] = [{ decl, rec }]
  const seen = new Set([`${decl.type}:${rec.id}`])
  for (let index = 0; index < members.length; index += 1) {
    const parent = members[index] as Member
    for (const childType of parent.decl.cascades) {
      const childDecl = findResourceByType(childType)
      if (childDecl === undefined) continue
      const collection = state.collection(childType)
      for (const fieldDecl of childDecl.fields) {
        if (fieldDecl.ref !== parent.decl.type || fieldDecl.name === 'trashItem') continue
        for (const child of collection.lookup(fieldDecl.name, parent.rec.id)) {
          const key = `${childType}:${child.id}`
          if (seen.has(key) || (!includeTrashed && child.trashItem !== null)) continue
          seen.add(key)
          members.push({ decl: childDecl, rec: child })
          if (members.length > MAX_CASCADE_OBJECTS) throw new ApiError('TL01-9002', `the cascade exceeds ${MAX_CASCADE_OBJECTS} objects`)
        }
      }
    }
  }
  return members
}

/** Moves a live object and its live cascade to the trash; returns the root's trash item. */
export function moveToTrash(tx: Tx, decl: ResourceDecl, rec: Rec, deletedBy: string | null): Rec {
  const groupId = newId()
  let rootItem: Rec | undefined
  for (const member of cascadeOf(tx.state, decl, rec, false)) {
    const itemId = member.rec === rec ? groupId : newId()
    const item: Rec = {
      id: itemId,
      version: 1,
      createdAt: tx.now,
      updatedAt: tx.now,
      trashItem: null,
      deletedObjectId: member.rec.id,
      deletedObjectType: member.decl.type,
      groupId,
      deletedBy,
    }
    tx.put('TrashItem', item)
    const trashed = { ...member.rec, trashItem: itemId }
    tx.put(member.decl.type, trashed)
    member.decl.onChange?.(tx, member.rec, trashed)
    rootItem ??= item
  }
  return rootItem as Rec
}

/** Removes an object, its whole cascade (live and trashed) and their trash items for good. */
export function removeForGood(tx: Tx, decl: ResourceDecl, rec: Rec): void {
  for (const member of cascadeOf(tx.state, decl, rec, true).reverse()) {
    if (typeof member.rec.trashItem === 'string' && tx.state.get('TrashItem', member.rec.trashItem) !== undefined) {
      tx.del('TrashItem', member.rec.trashItem)
    }
    tx.del(member.decl.type, member.rec.id)
    member.decl.onChange?.(tx, member.rec, undefined)
  }
}

/** The object a trash item stands for. */
export function trashedObject(state: StateView, item: Rec): { decl: ResourceDecl; rec: Rec } {
  const decl = resourceByType(item.deletedObjectType as string)
  const rec = state.get(decl.type, item.deletedObjectId as string)
  if (rec === undefined) assertionFailed(`trash item ${item.id} points at a missing ${decl.type}`)
  return { decl, rec }
}

/** The trash items of a group, the root first. */
function groupItems(state: StateView, item: Rec): Rec[] {
  if (item.groupId !== item.id) return [item]
  const items = [...state.collection('TrashItem').lookup('groupId', item.groupId)]
  return items.sort((a, b) => (a.id === item.id ? -1 : b.id === item.id ? 1 : 0))
}

/** A parent this object cascades from that is itself in the trash, if any. */
function trashedParent(state: StateView, decl: ResourceDecl, rec: Rec): Member | undefined {
  for (const parentDecl of RESOURCES) {
    if (!parentDecl.cascades.includes(decl.type)) continue
    for (const fieldDecl of decl.fields) {
      if (fieldDecl.ref !== parentDecl.type || fieldDecl.name === 'trashItem') continue
      const parentId = rec[fieldDecl.name]
      const parent = typeof parentId === 'string' ? state.get(parentDecl.type, parentId) : undefined
      if (parent !== undefined && parent.trashItem !== null) return { decl: parentDecl, rec: parent }
    }
  }
  return undefined
}

/**
 * Restores a trash item (a root: with its whole group); returns the restored
 * root object. Throws (and the write rolls back, restoring nothing) when a
 * parent is still in the trash or a unique field set is taken meanwhile.
 */
export function restoreFromTrash(tx: Tx, trashItemId: string): { decl: ResourceDecl; rec: Rec } {
  const item = tx.state.get('TrashItem', trashItemId)
  if (item === undefined) throw notFound('TrashItem', trashItemId)
  const root = trashedObject(tx.state, item)
  const parent = trashedParent(tx.state, root.decl, root.rec)
  if (parent !== undefined) {
    throw new ApiError('TL01-1106', `restore the ${parent.decl.type} '${parent.rec.id}' first: this ${root.decl.type} belongs to it and it is in the trash`)
  }
  let restored = root.rec
  for (const groupItem of groupItems(tx.state, item)) {
    const { decl, rec } = trashedObject(tx.state, groupItem)
    const back = { ...rec, trashItem: null }
    checkUnique(tx, decl, back)
    tx.put(decl.type, back)
    decl.onChange?.(tx, rec, back)
    tx.del('TrashItem', groupItem.id)
    if (groupItem.id === item.id) restored = back
  }
  return { decl: root.decl, rec: restored }
}

/** Empties a trash item: its object (a root: the whole group) is removed for good with its cascade. */
export function emptyTrashItem(tx: Tx, trashItemId: string): void {
  const item = tx.state.get('TrashItem', trashItemId)
  if (item === undefined) throw notFound('TrashItem', trashItemId)
  for (const groupItem of groupItems(tx.state, item)) {
    // An earlier member's cascade may already have taken this one.
    if (tx.state.get('TrashItem', groupItem.id) === undefined) continue
    const { decl, rec } = trashedObject(tx.state, groupItem)
    removeForGood(tx, decl, rec)
  }
}
