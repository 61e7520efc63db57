/*
 * The `$metadata` document of a resource, read straight off its declaration.
 * Its REMOVE cascade starts with TrashItem, as interface.md shows for
 * Project: removing an object also removes (deleting: creates) its trash
 * item; the declaration's cascades follow. A resource whose objects never
 * go to the trash (not removable, or the trash itself) lists none. Fields
 * the server keeps to itself (access INTERNAL) are not listed.
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

function cascadesOf(decl: ResourceDecl): { cascadeType: 'REMOVE'; objectTypes: string[] }[] {
  if (!decl.removable || decl.type === TRASH_TYPE) return []
  return [{ cascadeType: 'REMOVE', objectTypes: [TRASH_TYPE, ...decl.cascades] }]
}

function fieldMetadata(fieldDecl: FieldDecl): Record<string, unknown> {
  const referenced = fieldDecl.ref === undefined ? undefined : resourceByType(fieldDecl.ref)
  return {
    type: fieldDecl.type,
    ...(referenced?.path ? { path: `/v1/${referenced.path}` } : {}),
    name: fieldDecl.name,
    description: fieldDecl.description,
    ...(fieldDecl.defaultValue === undefined ? {} : { defaultValue: String(fieldDecl.defaultValue) }),
    access: fieldDecl.access,
    ...(fieldDecl.constraints.length === 0
      ? {}
      : { constraints: fieldDecl.constraints.map((constraint) => ({ type: constraint.type, details: constraintDetails(constraint) })) }),
  }
}

export function metadataOf(decl: ResourceDecl): Record<string, unknown> {
  return {
    type: decl.type,
    path: decl.path === null ? null : `/v1/${decl.path}`,
    fields: decl.fields.filter((fieldDecl) => fieldDecl.access !== 'INTERNAL').map(fieldMetadata),
    cascades: cascadesOf(decl),
  }
}
