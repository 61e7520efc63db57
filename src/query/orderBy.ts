/*
 * `$orderby`: comma-separated `<path> [asc|desc]`. Nulls sort first
 * ascending and last descending; strings compare by code point
 * (codePointOrder.ts), case-sensitively; ties are broken by id so pages
 * are stable.
 */
import { wrongParameter } from '../domain/errors.js'
import type { DisplayContext, Rec, ResourceDecl } from '../domain/schema.js'
import { compareCodePoints } from './codePointOrder.js'
import { resolvePath, type ResolvedPath } from './fieldPath.js'

export interface OrderKey {
  path: ResolvedPath
  descending: boolean
}

const MAX_ORDER_KEYS = 8

export function parseOrderBy(decl: ResourceDecl, text: string | undefined): OrderKey[] {
  if (text === undefined || text.trim() === '') return []
  if (text.length > 1024) throw wrongParameter('$orderby is longer than 1024 characters')
  const parts = text.split(',')
  if (parts.length > MAX_ORDER_KEYS) throw wrongParameter(`$orderby takes at most ${MAX_ORDER_KEYS} fields`)
  return parts.map((part) => {
    const words = part.trim().split(/\s+/)
    const [pathText, direction, ...rest] = words
    if (pathText === undefined || pathText === '' || rest.length > 0 || (direction !== undefined && direction !== 'asc' && direction !== 'desc')) {
      throw wrongParameter(`$orderby part '${part.trim()}' must be '<field> [asc|desc]'`)
    }
    return { path: resolvePath(decl, pathText.split('/'), pathText), descending: direction === 'desc' }
  })
}

export function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0
  if (a === null || a === undefined) return -1
  if (b === null || b === undefined) return 1
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'boolean' && typeof b === 'boolean') return a ? 1 : -1
  return compareCodePoints(String(a), String(b))
}

export function recordComparator(keys: readonly OrderKey[], context: DisplayContext): (a: Rec, b: Rec) => number {
  return (a, b) => {
    for (const key of keys) {
      const order = compareValues(key.path.get(a, context), key.path.get(b, context))
      if (order !== 0) return key.descending ? -order : order
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  }
}
