/*
 * Removing all of a user's records of one type — their tokens, pending
 * password confirmations, secret keys — inside a write. The records are
 * found through the type's `user` index; that lookup is a live view of the
 * index, so it is copied before the first removal changes it. A record goes
 * by a plain delete unless the caller says how (`remove`: removeForGood for
 * a type whose records may sit in the trash); `spare` keeps some.
 */
import type { Rec } from './record.js'
import type { Tx } from './tx.js'

export interface RemoveAllOptions {
  /** Records to keep (none unless given). */
  readonly spare?: (rec: Rec) => boolean
  /** How one record is removed; `tx.del` unless given. */
  readonly remove?: (rec: Rec) => void
}

export function removeAllOfUser(tx: Tx, type: string, userId: string, options: RemoveAllOptions = {}): void {
  const { spare, remove } = options
  for (const rec of [...tx.state.collection(type).lookup('user', userId)]) {
    if (spare?.(rec) === true) continue
    if (remove === undefined) tx.del(type, rec.id)
    else remove(rec)
  }
}
