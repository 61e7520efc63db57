/*
 * A JSON Merge Patch (RFC 7396) of a stored object, read as the changed
 * field values of an update (PATCH: routes/resources.ts; the update itself
 * is the same operation as a PUT's, updateObject.ts).
 *
 * The RFC merges the patch into the object as it is represented: a member
 * with null removes the field (here: clears it to null; a field that may
 * not be null is refused by its NotNull constraint, 412, as a PUT of null
 * is), an object merges into the object the field holds, anything else
 * (a text, a number, an array) replaces the field's value. A resource's
 * fields are scalars and references, so for all but one case this is what
 * a PUT's body does with the fields it names: fields that are not named
 * stay as they are, read-only, unknown and set-once fields are ignored as
 * PUT ignores them, `version` is the version the patch was made for. The
 * one case is a reference given as an object: merged into the reference
 * the object holds, `{"project": {"id": "…"}}` points it elsewhere and
 * `{"project": {"id": null}}` clears it, as in a PUT, but an object without
 * `id` leaves the reference as it is (a PUT reads it as no reference); the
 * referenced object itself is never changed through it. A list of
 * references is an array: replaced whole.
 */
import { isPlainObject, readFields, type ValueSource } from './input.js'
import type { ResourceDecl } from './schema.js'

/** The field values a merge patch changes (see the top); 400 for a value a field cannot take. */
export function mergePatchFields(decl: ResourceDecl, patch: Record<string, unknown>, source: ValueSource): Record<string, unknown> {
  let named = patch
  for (const fieldDecl of decl.fields) {
    if (fieldDecl.ref === undefined || fieldDecl.list || !Object.hasOwn(patch, fieldDecl.name)) continue
    const value = patch[fieldDecl.name]
    if (!isPlainObject(value) || Object.hasOwn(value, 'id')) continue
    // Merged into the reference the object holds: its id stays.
    if (named === patch) named = Object.assign(Object.create(null) as Record<string, unknown>, patch)
    delete named[fieldDecl.name]
  }
  return readFields(decl, named, source, false)
}
