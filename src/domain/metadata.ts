/*
 * The `$metadata` document of a resource, read straight off its declaration.
 * Its REMOVE cascade starts with TrashItem, as interface.md shows for
 * Project: removing an object also removes (deleting: creates) its trash
 * item; the declaration's cascades follow. A resource whose objects never
 * go to the trash (not removable, or the trash itself) lists none. Parts
 * saved with their parent (`savedWith`: a bill's items and VAT rows) follow
 * as PERSIST and MERGE cascades. Fields the server keeps to itself (access
 * INTERNAL) are not listed.
 *
 * An enumeration is a type of its own, as the original service shows it: a
 * field with an Enum constraint has the type named after the field
 * (`mode` → `Mode`, `category` → `Category`, `vatMode` → `VatMode`), and the
 * constraint lists the values. The document of an inner collection names
 * its path with the parent's id as `{id}` (`/v1/time/projects/{id}/members`).
 * A list of references says so (`list: true`) beside its element type.
 */
import type { Constraint, FieldDecl, ResourceDecl } from './schema.js'
import { resourceByType } from './resources/index.js'

function constraintDetails(constraint: Constraint): string {
  switch (constraint.type) {
    case 'NotNull':
    case 'Email':
      return ''
    case 'Size':
      return `min ${constraint.min}, max ${constraint.max}`
    case 'Pattern':
      return constraint.regexp
    case 'Min':
    case 'Max':
      return `value ${constraint.value}`
    case 'Enum':
      return constraint.values.join(', ')
    case 'TimeZone':
      return 'IANA time zone name'
  }
}

const TRASH_TYPE = 'TrashItem'

type CascadeType = 'REMOVE' | 'PERSIST' | 'MERGE'

function cascadesOf(decl: ResourceDecl): { cascadeType: CascadeType; objectTypes: string[] }[] {
  const cascades: { cascadeType: CascadeType; objectTypes: string[] }[] = []
  if (decl.removable && decl.type !== TRASH_TYPE) cascades.push({ cascadeType: 'REMOVE', objectTypes: [TRASH_TYPE, ...decl.cascades] })
  if (decl.savedWith.length > 0) {
    cascades.push({ cascadeType: 'PERSIST', objectTypes: [...decl.savedWith] }, { cascadeType: 'MERGE', objectTypes: [...decl.savedWith] })
  }
  return cascades
}

/** The type a field shows: an enumeration's own type (named after the field), else the declared type. */
export function shownType(fieldDecl: FieldDecl): string {
  const enumerated = fieldDecl.ref === undefined && fieldDecl.constraints.some((constraint) => constraint.type === 'Enum')
  return enumerated ? fieldDecl.name.charAt(0).toUpperCase() + fieldDecl.name.slice(1) : fieldDecl.type
}

function fieldMetadata(fieldDecl: FieldDecl): Record<string, unknown> {
  const referenced = fieldDecl.ref === undefined ? undefined : resourceByType(fieldDecl.ref)
  return {
    type: shownType(fieldDecl),
    ...(referenced?.path ? { path: `/v1/${referenced.path}` } : {}),
    name: fieldDecl.name,
    ...(fieldDecl.list ? { list: true } : {}),
    description: fieldDecl.description,
    ...(fieldDecl.defaultValue === undefined ? {} : { defaultValue: String(fieldDecl.defaultValue) }),
    access: fieldDecl.access,
    ...(fieldDecl.constraints.length === 0 ? {} : { constraints: fieldDecl.constraints.map((constraint) => ({ type: constraint.type, details: constraintDetails(constraint) })) }),
  }
}

/** The fields a client is told about (all but those the server keeps to itself), in declaration order. */
export function describedFields(decl: ResourceDecl): FieldDecl[] {
  return decl.fields.filter((fieldDecl) => fieldDecl.access !== 'INTERNAL')
}

/** The document of `decl` at `path` (under /v1; the declaration's own path unless an inner collection's is given). */
export function metadataOf(decl: ResourceDecl, path: string | null = decl.path): Record<string, unknown> {
  return {
    type: decl.type,
    path: path === null ? null : `/v1/${path}`,
    fields: describedFields(decl).map(fieldMetadata),
    cascades: cascadesOf(decl),
  }
}
