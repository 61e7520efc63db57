/*
 * What compiling one `$filter` node gives (filterCompiler.ts): its static
 * type, the closure that evaluates it, whether a null it gives is unknown
 * (computed from a null) rather than a missing value, and the one member
 * it depends on, if any (so that filterLeaves.ts can remember its answer
 * per value of that member). Typing is checked when compiling, once, so
 * every type error is a 400 at the position of the node before any record
 * is read; the helpers that word those errors live here, beside the types
 * they describe, for the comparison, arithmetic and function modules alike.
 */
import { ApiError } from '../domain/errors.js'
import type { DisplayContext, Rec } from '../domain/schema.js'
import type { FilterNode } from './filterAst.js'
import type { ResolvedPath } from './fieldPath.js'

/** Static type of a node; 'null' is the null literal, 'any' a field of an unknown type (checked at run time only). */
export type FilterType = 'string' | 'number' | 'boolean' | 'date' | 'reference' | 'null' | 'any' | 'list'

/** What a filter is evaluated on: a record, or a row of a bound collection (rowScan.ts). */
export type Subject = Rec | number

export type Evaluate = (subject: Subject, context: DisplayContext) => unknown

export interface Typed {
  readonly type: FilterType
  readonly evaluate: Evaluate
  /** A null this node gives is unknown (computed from a null), not a missing value. */
  readonly unknownWhenNull: boolean
  /** For type `list`: the type of its elements' values. */
  readonly element?: FilterType
  /** The one member the node depends on; null for none, false for several. */
  readonly dep: ResolvedPath | null | false
}

/** The one member that all `parts` depend on (see Typed.dep). */
export function depOf(...parts: Typed[]): ResolvedPath | null | false {
  let dep: ResolvedPath | null = null
  for (const part of parts) {
    if (part.dep === false) return false
    if (part.dep === null) continue
    if (dep !== null && dep.text !== part.dep.text) return false
    dep = part.dep
  }
  return dep
}

export function typeError(problem: string, position: number): ApiError {
  return new ApiError('TL01-1105', `$filter: ${problem} at position ${position}`)
}

/** Where a node's text begins (a binary node's `pos` is its operator). */
export function startOf(node: FilterNode): number {
  return node.kind === 'binary' ? startOf(node.left) : node.pos
}

export function describe(type: FilterType): string {
  return type === 'null' ? 'null' : `a ${type}`
}

export const isWild = (type: FilterType): boolean => type === 'any' || type === 'null'
