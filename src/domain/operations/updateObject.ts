/*
 * Changing an object of any resource: the object must be updatable, live
 * and visible to the caller; the version rule — an update names the version
 * it was made for and is refused (412 TL01-1107) when the object has moved
 * on, and one that names none is refused where one is required
 * (ExpectedVersion 'required') — then the write
 * permission and the locked periods (locks.ts) on the changed candidate, then the change (recordMaking.ts: a new
 * record, version + 1). The fields the resource derives on every write (its
 * declaration's deriveOnWrite) join the changed values first; fields a write
 * option derives (deriveFields.ts) are computed from the candidate as it
 * will be stored.
 */
import type { Caller } from '../caller.js'
import { ApiError } from '../errors.js'
import { checkWrite } from '../policy.js'
import { changeRecord } from '../recordMaking.js'
import type { ChangeSession, Rec, ResourceDecl } from '../schema.js'
import type { Tx } from '../tx.js'
import type { DeriveFields } from '../deriveFields.js'
import { findVisible } from './findVisible.js'
import { checkNotLocked } from './locks.js'

/**
 * The version an update was made for: a number, which the stored object must be at; 'any' when it names none and
 * needs none; 'required' when it names none but must (refused).
 */
export type ExpectedVersion = number | 'any' | 'required'

export function updateObject(tx: Tx, caller: Caller & ChangeSession, decl: ResourceDecl, id: string, values: Record<string, unknown>, version: ExpectedVersion, derive?: DeriveFields): Rec {
  if (!decl.updatable) throw new ApiError('TL01-1103', `${decl.type} objects cannot be changed`)
  const before = findVisible(tx.state, caller, decl, id)
  if (version === 'required') throw new ApiError('TL01-1107', `the update of ${decl.type} '${id}' must carry its version (or use version_ignore=true)`)
  if (typeof version === 'number' && version !== before.version) {
    throw new ApiError('TL01-1107', `${decl.type} '${id}' is at version ${before.version}, the update was made for version ${version}`)
  }
  let changed = values
  let candidate = { ...before, ...changed }
  const derived = decl.deriveOnWrite?.(candidate, values, tx.now)
  if (derived !== undefined && Object.keys(derived).length > 0) {
    changed = Object.assign({}, values, derived)
    candidate = { ...before, ...changed }
  }
  checkWrite(caller, decl, candidate, before, tx.state)
  checkNotLocked(tx.state, caller, decl, before, candidate)
  return changeRecord(tx, decl, before, derive === undefined ? changed : Object.assign({}, changed, derive({ ...candidate, updatedAt: tx.now }, tx.state)), caller)
}

/** An update that checks no version (actions and `$set` without one): only these values change. */
export function changeFields(tx: Tx, caller: Caller & ChangeSession, decl: ResourceDecl, id: string, values: Record<string, unknown>, derive?: DeriveFields): Rec {
  return updateObject(tx, caller, decl, id, values, 'any', derive)
}
