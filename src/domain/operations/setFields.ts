/*
 * `$set`: an update from text values (a query's `field=value` pairs). Only
 * fields a client may write are accepted — not internal, read-only,
 * computed, set-once or hashed ones (a password is never set from a query)
 * — and each text is converted as its field's type; then it is an update
 * that checks the version only when one is named (updateObject.ts).
 */
import type { Caller } from '../caller.js'
import { wrongParameter } from '../errors.js'
import { convertValue } from '../input.js'
import type { ChangeSession, Rec, ResourceDecl } from '../schema.js'
import type { Tx } from '../tx.js'
import { updateObject } from './updateObject.js'

/** The field values of `field=value` text pairs; 400 for a field that cannot be set this way. */
export function fieldsFromText(decl: ResourceDecl, pairs: Iterable<readonly [string, string]>): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const [name, value] of pairs) {
    const fieldDecl = decl.fieldsByName.get(name)
    if (fieldDecl === undefined || fieldDecl.access === 'INTERNAL') throw wrongParameter(`${decl.type} has no field '${name}'`)
    if (fieldDecl.access === 'READ_ONLY' || fieldDecl.computed || fieldDecl.setOnce || name === 'id') throw wrongParameter(`${decl.type}.${name} is read-only`)
    if (fieldDecl.hashed) throw wrongParameter(`${decl.type}.${name} cannot be set with $set`)
    values[name] = convertValue(decl, fieldDecl, value, 'text')
  }
  return values
}

export function setFields(tx: Tx, caller: Caller & ChangeSession, decl: ResourceDecl, id: string, values: Record<string, unknown>, version: number | null): Rec {
  return updateObject(tx, caller, decl, id, values, version ?? 'any')
}
