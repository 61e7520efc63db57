/*
 * The comparisons of a compiled `$filter` (eq, ne, lt, le, gt, ge) and the
 * membership test of a list path (`tags/id eq 'x'`). Whether two types may
 * be compared is checked when compiling (references only by eq/ne, with a
 * string id; a list only by eq/ne against one value of its elements' type).
 * At run time a missing value is a value (`eq null` holds for it, an
 * ordering comparison with it is false), while a null computed from a null
 * is unknown and makes the comparison unknown (filterCompiler.ts, the top).
 * Strings order by code point (codePointOrder.ts), false before true.
 */
import { compareCodePoints } from './codePointOrder.js'
import { depOf, describe, isWild, typeError, type FilterType, type Typed } from './typedFilterNode.js'

/** Whether values of the two types may be compared; references only by eq/ne, with a string id. */
function comparable(a: FilterType, b: FilterType, ordered: boolean): boolean {
  if (isWild(a) || isWild(b)) return true
  if (a === 'reference' || b === 'reference') return !ordered && (a === 'string' || a === 'reference') && (b === 'string' || b === 'reference')
  return a === b
}

/** -1, 0 or 1 for two non-null values of one primitive type (strings by code point); null otherwise. */
function order(a: unknown, b: unknown): number | null {
  if (a === null || b === null || typeof a !== typeof b) return null
  if (typeof a === 'string') return compareCodePoints(a, b as string)
  if (typeof a !== 'number' && typeof a !== 'boolean') return null
  const [x, y] = [Number(a), Number(b)] // false < true
  return sign(x < y, x > y)
}

const sign = (less: boolean, greater: boolean): number => (less ? -1 : greater ? 1 : 0)

const COMPARE: Record<'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge', (a: unknown, b: unknown) => boolean> = {
  eq: (a, b) => a === b,
  ne: (a, b) => a !== b,
  lt: (a, b) => (order(a, b) ?? 0) < 0,
  le: (a, b) => {
    const o = order(a, b)
    return o !== null && o <= 0
  },
  gt: (a, b) => (order(a, b) ?? 0) > 0,
  ge: (a, b) => {
    const o = order(a, b)
    return o !== null && o >= 0
  },
}

/** `list eq value` (any element equals) or `list ne value` (none does), either way round. */
function compileMembership(op: keyof typeof COMPARE, pos: number, left: Typed, right: Typed): Typed {
  const [list, one] = left.type === 'list' ? [left, right] : [right, left]
  if ((op !== 'eq' && op !== 'ne') || one.type === 'list' || !comparable(list.element ?? 'any', one.type, false)) {
    throw typeError(`a list is compared only with eq or ne against one value of its elements' type, not with '${op}' against ${describe(one.type)}`, pos)
  }
  const [values, value] = [list.evaluate, one.evaluate]
  const wanted = op === 'eq'
  return {
    type: 'boolean',
    evaluate: (rec, context) => {
      const y = value(rec, context)
      if (y === null && one.unknownWhenNull) return null
      const elements = values(rec, context) as readonly unknown[]
      for (const x of elements) if (x === y) return wanted
      return !wanted
    },
    unknownWhenNull: one.unknownWhenNull,
    dep: depOf(left, right),
  }
}

export function compileComparison(op: keyof typeof COMPARE, pos: number, left: Typed, right: Typed): Typed {
  if (left.type === 'list' || right.type === 'list') return compileMembership(op, pos, left, right)
  const ordered = op !== 'eq' && op !== 'ne'
  if (!comparable(left.type, right.type, ordered)) {
    throw typeError(`'${op}' cannot compare ${describe(left.type)} with ${describe(right.type)}`, pos)
  }
  const compare = COMPARE[op]
  const [a, b] = [left.evaluate, right.evaluate]
  if (!left.unknownWhenNull && !right.unknownWhenNull) {
    return { type: 'boolean', evaluate: (rec, context) => compare(a(rec, context), b(rec, context)), unknownWhenNull: false, dep: depOf(left, right) }
  }
  const [leftUnknown, rightUnknown] = [left.unknownWhenNull, right.unknownWhenNull]
  return {
    type: 'boolean',
    evaluate: (rec, context) => {
      const x = a(rec, context)
      if (x === null && leftUnknown) return null
      const y = b(rec, context)
      if (y === null && rightUnknown) return null
      return compare(x, y)
    },
    unknownWhenNull: true,
    dep: depOf(left, right),
  }
}
