/*
 * How a compiled `$filter` reads members: from records (the compiled
 * filter's `test`), or from the rows of one collection (`bindRows`: its
 * columns, and answers remembered per text of a column: rowScan.ts). The
 * same nodes are compiled over either set of leaves (filterCompiler.ts), so
 * a filter means the same on a record and on its row; a node that depends
 * on one member only is remembered per value of it where the leaves can
 * (`memoized`).
 */
import type { DisplayContext, Rec } from '../domain/schema.js'
import type { ResolvedPath } from './fieldPath.js'
import type { RowBinding } from './rowScan.js'
import type { Evaluate, Typed } from './typedFilterNode.js'

export interface Leaves {
  member(path: ResolvedPath): Evaluate
  /** `evaluate`, which depends on no member but `path`, as these leaves run it best. */
  memo(path: ResolvedPath, evaluate: Evaluate): Evaluate
}

export const RECORD_LEAVES: Leaves = {
  member: (path) => {
    const get = path.get
    return (rec, context) => get(rec as Rec, context)
  },
  memo: (_path, evaluate) => evaluate,
}

export function rowLeaves(binding: RowBinding): Leaves {
  return {
    member: (path) => binding.reader(path) as Evaluate,
    memo: (path, evaluate) => binding.memo(path, evaluate as (row: number, context: DisplayContext) => unknown) as Evaluate,
  }
}

/** `typed` with its evaluation remembered per value of its one member, when it has one (Leaves.memo). */
export function memoized(leaves: Leaves, typed: Typed): Typed {
  return typed.dep === null || typed.dep === false ? typed : { ...typed, evaluate: leaves.memo(typed.dep, typed.evaluate) }
}
