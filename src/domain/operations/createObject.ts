/*
 * Creating an object of any resource: the values as read from the request,
 * plus the caller as the owner, user or author when the declaration needs
 * one (a NotNull reference to User named so) and the values leave it out;
 * the write permission (policy.ts) and the locked periods (locks.ts) are
 * checked on that candidate before the
 * record is built, validated and stored (recordMaking.ts). The fields the
 * resource derives on every write (its declaration's deriveOnWrite: a time
 * record's stop or duration) are added to the candidate first, so every
 * check sees them; fields a write option derives from the record about to
 * be stored (deriveFields.ts: calculate_price) are added last.
 */
import type { Caller } from '../caller.js'
import { checkWrite } from '../policy.js'
import { buildRecord, insertRecord } from '../recordMaking.js'
import type { Rec, ResourceDecl } from '../schema.js'
import type { Tx } from '../tx.js'
import type { DeriveFields } from '../deriveFields.js'
import { checkNotLocked } from './locks.js'

/** The fields that default to the caller. */
const CALLER_FIELDS = ['owner', 'user', 'author'] as const

export function createObject(tx: Tx, caller: Caller, decl: ResourceDecl, values: Record<string, unknown>, derive?: DeriveFields): Rec {
  // Object.assign, not spreads: see the note on spreads in recordMaking.ts.
  const candidate: Record<string, unknown> = Object.assign({}, values)
  for (const name of CALLER_FIELDS) {
    const fieldDecl = decl.fieldsByName.get(name)
    if (fieldDecl?.ref === 'User' && values[name] === undefined && fieldDecl.constraints.some((c) => c.type === 'NotNull')) candidate[name] = caller.userId
  }
  if (decl.deriveOnWrite !== undefined) Object.assign(candidate, decl.deriveOnWrite(buildRecord(decl, candidate, tx.now), values, tx.now))
  checkWrite(caller, decl, Object.assign({}, candidate, { id: '', version: 0, createdAt: 0, updatedAt: 0, trashItem: null }), undefined, tx.state)
  checkNotLocked(tx.state, caller, decl, undefined, candidate)
  return insertRecord(tx, decl, derive === undefined ? candidate : Object.assign(candidate, derive(buildRecord(decl, candidate, tx.now), tx.state)), caller)
}
