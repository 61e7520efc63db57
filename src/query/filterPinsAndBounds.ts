/*
 * What a `$filter` tells the planner (plan.ts) besides its predicate: the
 * index pins (`<indexed path> eq <literal>`, `id` too: the primary map) and
 * the bounds on Date fields (`<datefield> gt|ge|lt|le datetime'…'`) among
 * the conjuncts joined by the top-level `and`, either way round
 * (`literal op member` is read as the member sees it). Anything under an
 * `or` or a `not` narrows nothing. The planner may use them to narrow the
 * candidates; the predicate always runs too, so a pin or bound is a hint
 * that can only make a read cheaper, never change its answer.
 */
import type { ResourceDecl } from '../domain/schema.js'
import type { DateRange } from '../engine/dateBuckets.js'
import type { BinaryNode, FilterNode, LiteralNode, MemberNode } from './filterAst.js'
import { resolvePath } from './fieldPath.js'

export function topLevelConjuncts(node: FilterNode): FilterNode[] {
  if (node.kind === 'binary' && node.op === 'and') return [...topLevelConjuncts(node.left), ...topLevelConjuncts(node.right)]
  return [node]
}

/** `member op literal` or `literal op member` as [member, literal, op as seen from the member]. */
function memberAgainstLiteral(node: FilterNode): { member: MemberNode; literal: LiteralNode; op: BinaryNode['op'] } | undefined {
  if (node.kind !== 'binary') return undefined
  if (node.left.kind === 'member' && node.right.kind === 'literal') return { member: node.left, literal: node.right, op: node.op }
  if (node.left.kind === 'literal' && node.right.kind === 'member') return { member: node.right, literal: node.left, op: FLIPPED[node.op] ?? node.op }
  return undefined
}

const FLIPPED: Partial<Record<BinaryNode['op'], BinaryNode['op']>> = { lt: 'gt', le: 'ge', gt: 'lt', ge: 'le' }

export function extractEqualities(decl: ResourceDecl, conjuncts: readonly FilterNode[]): Map<string, unknown> {
  const pins = new Map<string, unknown>()
  for (const conjunct of conjuncts) {
    const match = memberAgainstLiteral(conjunct)
    if (match === undefined || match.op !== 'eq') continue
    const indexed = resolvePath(decl, match.member.path, undefined, true).indexedField
    if (indexed !== null) pins.set(indexed, match.literal.value)
  }
  return pins
}

export function extractRanges(decl: ResourceDecl, conjuncts: readonly FilterNode[]): Map<string, DateRange> {
  const ranges = new Map<string, DateRange>()
  for (const conjunct of conjuncts) {
    const match = memberAgainstLiteral(conjunct)
    if (match === undefined || match.literal.type !== 'datetime' || match.member.path.length !== 1) continue
    const path = resolvePath(decl, match.member.path, undefined, true)
    const field = path.field
    if (field.type !== 'Date' || field.ref !== undefined || path.many) continue
    const range = ranges.get(field.name) ?? { lowInclusive: false, highInclusive: false }
    const value = match.literal.value
    if (match.op === 'gt' || match.op === 'ge') tightenLow(range, value, match.op === 'ge')
    else if (match.op === 'lt' || match.op === 'le') tightenHigh(range, value, match.op === 'le')
    else continue
    ranges.set(field.name, range)
  }
  return ranges
}

function tightenLow(range: DateRange, value: number, inclusive: boolean): void {
  if (range.low === undefined || value > range.low || (value === range.low && !inclusive)) {
    range.low = value
    range.lowInclusive = inclusive
  }
}

function tightenHigh(range: DateRange, value: number, inclusive: boolean): void {
  if (range.high === undefined || value < range.high || (value === range.high && !inclusive)) {
    range.high = value
    range.highInclusive = inclusive
  }
}
