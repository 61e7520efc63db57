/*
 * Field paths (`owner/firstName`, `project/client/name`) resolved against
 * the declarations once, into a getter that follows references through the
 * tenant's state. Used by $filter, $orderby, summaries and report grouping.
 * `x/id` of a reference reads the stored id without a lookup; a derived
 * field is computed by its declaration's `derive`. A path through a list of
 * references (`tags/name`) has many values: only $filter asks for such a
 * path (`lists`), and its getter answers the array of the element values;
 * everywhere else (sorting, grouping) it is a 400.
 */
import { wrongParameter } from '../domain/errors.js'
import { resourceByType } from '../domain/resources/index.js'
import type { DisplayContext, FieldDecl, Rec, ResourceDecl } from '../domain/schema.js'

export interface ResolvedPath {
  readonly text: string
  /** The last field of the path. */
  readonly field: FieldDecl
  /** The stored value at the end of the path, or null when any step is missing. */
  readonly get: (rec: Rec, context: DisplayContext) => unknown
  /**
   * The field whose index can answer an `eq` on this path: `<ref>/id` or
   * `<ref>` of an indexed reference, another indexed field, or `id` itself
   * (answered by the primary map, PRIMARY_KEY).
   */
  readonly indexedField: string | null
  /** The path crosses a list of references: `get` answers an array (one value per element). */
  readonly many: boolean
  /** The stored field whose value (or null) `get` answers as it is (`name`, `client/id`): read from its column by a scan (rowScan.ts). */
  readonly storedField?: string
}

const MAX_PATH_DEPTH = 8

/** The field every record has and every collection maps records by. */
export const PRIMARY_KEY = 'id'

export function resolvePath(decl: ResourceDecl, segments: readonly string[], text = segments.join('/'), lists = false): ResolvedPath {
  if (segments.length === 0 || segments.length > MAX_PATH_DEPTH) throw wrongParameter(`field path '${text}' is empty or too deep`)
  const steps: FieldDecl[] = []
  let current = decl
  for (const [index, name] of segments.entries()) {
    const fieldDecl = current.fieldsByName.get(name)
    if (fieldDecl === undefined || fieldDecl.access === 'WRITE_ONLY' || fieldDecl.access === 'INTERNAL') throw wrongParameter(`${current.type} has no field '${name}' (in '${text}')`)
    if (fieldDecl.list && (!lists || index > 0)) {
      throw wrongParameter(`'${name}' in '${text}' is a list: a $filter compares it (or its elements' fields) with eq or ne, nothing else uses it`)
    }
    steps.push(fieldDecl)
    if (index < segments.length - 1) {
      if (fieldDecl.ref === undefined) throw wrongParameter(`'${name}' in '${text}' is not a reference, so it has no fields`)
      current = resourceByType(fieldDecl.ref)
    }
  }
  const last = steps.at(-1) as FieldDecl
  const first = steps[0] as FieldDecl
  if (first.list) return listPath(first, segments, text)
  // `client/id` reads the reference itself.
  if (steps.length === 2 && first.ref !== undefined && last.name === 'id') {
    return { text, field: last, indexedField: first.indexed ? first.name : null, many: false, get: (rec) => rec[first.name] ?? null, storedField: first.name }
  }
  if (steps.length === 1) {
    const name = first.name
    if (name === 'displayName') return { text, field: first, indexedField: null, many: false, get: (rec, context) => decl.displayName(rec, context) }
    const derive = first.derive
    if (derive !== undefined) return { text, field: first, indexedField: null, many: false, get: (rec, context) => derive(rec, context) ?? null }
    return { text, field: first, indexedField: first.indexed || name === PRIMARY_KEY ? name : null, many: false, get: (rec) => rec[name] ?? null, ...(first.computed ? {} : { storedField: name }) }
  }
  return {
    text,
    field: last,
    indexedField: null,
    many: false,
    get: (rec, context) => {
      let target: Rec | undefined = rec
      let targetDecl = decl
      for (const step of steps.slice(0, -1)) {
        const id: unknown = target[step.name]
        if (typeof id !== 'string' || step.ref === undefined) return null
        target = context.get(step.ref, id)
        if (target === undefined) return null
        targetDecl = resourceByType(step.ref)
      }
      if (last.name === 'displayName') return targetDecl.displayName(target, context)
      if (last.derive !== undefined) return last.derive(target, context) ?? null
      return target[last.name] ?? null
    },
  }
}

/**
 * A path that starts with a list of references: `tags` and `tags/id` answer
 * the stored ids (a derived list's: its derive's), `tags/<path>` the value of the rest of the path on each
 * referenced object (null for an element that is gone).
 */
function listPath(list: FieldDecl, segments: readonly string[], text: string): ResolvedPath {
  const name = list.name
  const derive = list.derive
  const ids = (rec: Rec, context: DisplayContext): readonly unknown[] => {
    const value = derive === undefined ? rec[name] : derive(rec, context)
    return Array.isArray(value) ? (value as unknown[]) : []
  }
  const rest = segments.slice(1)
  const element = resourceByType(list.ref as string)
  if (rest.length === 0 || (rest.length === 1 && rest[0] === 'id')) {
    return { text, field: rest.length === 0 ? list : (element.fieldsByName.get('id') as FieldDecl), indexedField: null, many: true, get: ids }
  }
  const inner = resolvePath(element, rest, text)
  const get = inner.get
  return {
    text,
    field: inner.field,
    indexedField: null,
    many: true,
    get: (rec, context) =>
      ids(rec, context).map((id) => {
        const target = typeof id === 'string' ? context.get(element.type, id) : undefined
        return target === undefined ? null : get(target, context)
      }),
  }
}
