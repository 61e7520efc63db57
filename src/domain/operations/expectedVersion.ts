/*
 * The precondition of a change made for a given version of an object
 * (HTTP's `If-Match`): checked first in the write, before the change
 * itself, on the object as the caller may see it (404 when they may not, so
 * a refusal never tells an invisible object's version). The object must be
 * at one of the expected versions, else 412 TL01-1110; `'any'` asks only
 * that it exist. The body's own `version` is a separate check
 * (updateObject.ts: 409 TL01-1107), kept when both are given.
 */
import type { Caller } from '../caller.js'
import { ApiError, notFound } from '../errors.js'
import { canSee } from '../policy.js'
import type { ResourceDecl } from '../schema.js'
import type { StateView } from '../tx.js'
import { findVisible } from './findVisible.js'

/** The versions a change accepts; `'any'`: whatever version the object is at. */
export type ExpectedVersions = 'any' | readonly number[]

/** `trashedToo`: the change applies to a trashed object as well (a delete for good). */
export function checkExpectedVersion(state: StateView, caller: Caller, decl: ResourceDecl, id: string, expected: ExpectedVersions, trashedToo = false): void {
  const rec = trashedToo ? state.get(decl.type, id) : findVisible(state, caller, decl, id)
  if (rec === undefined || !canSee(caller, decl, rec, state)) throw notFound(decl.type, id)
  if (expected === 'any' || expected.includes(rec.version)) return
  const named = expected.length === 0 ? 'no version' : `version ${expected.join(' or ')}`
  throw new ApiError('TL01-1110', `${decl.type} '${id}' is at version ${rec.version}; If-Match names ${named}`)
}
