/*
 * `$filter` compiler: parsed FilterNode → predicate over records.
 *
 * One pass over the AST gives every node a static type and a closure that
 * evaluates it; the closures are composed into `test`. No user text is ever
 * run as code. Types are checked here, once, so a filter such as
 * `name add 1` is a 400 before any record is read.
 *
 * Nulls come in two kinds, told apart when compiling. A field that is
 * missing or null (and the `null` literal) is a value: `eq`/`ne` treat it
 * as one (`done eq null` holds for a missing `done`), an ordering
 * comparison with it is false, and as a boolean it counts as false
 * (`not done` holds). A null *computed* by a function or by arithmetic of
 * null (or a division by zero) is unknown: every comparison with it (all
 * six, `eq null` too) is unknown, and so is a bare boolean function that
 * gives it. Unknown follows Kleene's logic: `not` keeps it unknown, `and`
 * with false is false, `or` with true is true. A record passes only when
 * the whole predicate is true, so for a null `code` neither
 * `tolower(code) ne 'a'` nor `not startswith(code, 'A')` keeps it.
 *
 * A path through a list of references (`tags/id`, `tags/name`) has the
 * static type `list` and many values: it may only be compared with `eq`
 * or `ne` against one value of its elements' type. `eq` holds when any
 * element equals the value, `ne` when none does; an empty or missing list
 * has no element, so `tags/id ne 'x'` holds for it.
 *
 * Besides the predicate, the top-level `and` conjuncts give the planner
 * index pins and Date bounds (filterPinsAndBounds.ts); the predicate always
 * runs too.
 *
 * The pieces, each a module: what compiling a node gives and its type
 * errors (typedFilterNode.ts), how members are read from records or rows
 * (filterLeaves.ts), comparisons (filterComparison.ts), arithmetic
 * (filterArithmetic.ts), the function table (filterFunctions.ts). This
 * module parses, walks the tree and joins them; `and`, `or` and `not` are
 * here.
 */
import { ApiError } from '../domain/errors.js'
import type { DisplayContext, FieldDecl, Rec, ResourceDecl } from '../domain/schema.js'
import type { BinaryNode, FilterNode, MemberNode, UnaryNode } from './filterAst.js'
import { compileArithmetic } from './filterArithmetic.js'
import { compileComparison } from './filterComparison.js'
import { compileCall } from './filterFunctions.js'
import { memoized, RECORD_LEAVES, rowLeaves, type Leaves } from './filterLeaves.js'
import { FilterLimitError, FilterSyntaxError, parseFilter } from './filterParser.js'
import { extractEqualities, extractRanges, topLevelConjuncts } from './filterPinsAndBounds.js'
import { resolvePath, type ResolvedPath } from './fieldPath.js'
import type { DateRange } from '../engine/dateBuckets.js'
import { codeMemoOf, type RowBinding, type RowFilter, type RowFilterPart, type RowRead } from './rowScan.js'
import { depOf, describe, isWild, startOf, typeError, type Evaluate, type FilterType, type Subject, type Typed } from './typedFilterNode.js'

export interface CompiledFilter {
  /** True when the record passes the filter. */
  test(rec: Rec, context: DisplayContext): boolean
  /** `test` over the rows of one collection, reading their columns (rowScan.ts); compiled once per binding and kept. */
  bindRows(binding: RowBinding): RowFilter
  /** Indexable pins from `<indexed path> eq <literal>` (`id` too: the primary map) joined only by top-level `and`. */
  equalities: ReadonlyMap<string, unknown>
  /** Bounds on Date fields from top-level `and` conjuncts `<datefield> gt|ge|lt|le datetime'…'`. */
  ranges: ReadonlyMap<string, DateRange>
}

export function compileFilter(decl: ResourceDecl, text: string): CompiledFilter {
  const root = parse(text)
  const compiled = compileNode(decl, root, RECORD_LEAVES)
  if (compiled.type !== 'boolean' && compiled.type !== 'any') {
    throw typeError(`the whole filter must be a boolean expression, not ${describe(compiled.type)}`, startOf(root))
  }
  const evaluate = compiled.evaluate
  const conjuncts = topLevelConjuncts(root)
  // Compiled once per binding, a collection's (rowScan.ts RowBinding.of): kept with the filter for its later reads.
  const boundRows = new WeakMap<RowBinding, RowFilter>()
  return {
    test: (rec, context) => evaluate(rec, context) === true,
    bindRows: (binding) => {
      let bound = boundRows.get(binding)
      if (bound === undefined) {
        bound = rowFilterOf(conjuncts.map((conjunct) => compileNode(decl, conjunct, rowLeaves(binding)).evaluate))
        boundRows.set(binding, bound)
      }
      return bound
    },
    equalities: extractEqualities(decl, conjuncts),
    ranges: extractRanges(decl, conjuncts),
  }
}

/**
 * The filter over rows from its top-level `and` parts, each compiled alone: a row passes the whole when it passes
 * every part (Kleene's `and` is true only when both sides are), so a block scan (plan.ts) may narrow its rows one
 * part at a time, a part that depends on one text column by its answers per code.
 */
function rowFilterOf(evaluates: readonly Evaluate[]): RowFilter {
  const parts = evaluates.map((evaluate): RowFilterPart => {
    const read = evaluate as RowRead
    const byCode = codeMemoOf(read)
    // A part answered by code reads its memo itself (one call less per row than through `read`).
    if (byCode !== null) return { test: (row, context) => byCode.read(row, context) === true, byCode }
    return { test: (row, context) => read(row, context) === true, byCode }
  })
  const [first, second] = parts
  if (parts.length === 1 && first !== undefined) return { test: first.test, parts }
  if (parts.length === 2 && first !== undefined && second !== undefined) return { test: (row, context) => first.test(row, context) && second.test(row, context), parts }
  return { test: (row, context) => parts.every((part) => part.test(row, context)), parts }
}

// ---------------------------------------------------------------------------
// Parsing and errors

function parse(text: string): FilterNode {
  try {
    return parseFilter(text)
  } catch (err) {
    if (err instanceof FilterSyntaxError) throw new ApiError('TL01-1105', `$filter: ${withPosition(err.message, err.position)}`)
    if (err instanceof FilterLimitError) throw new ApiError('TL01-9002', `$filter: ${err.message}`)
    throw err
  }
}

/** Appends `at position n` unless the message already names that position. */
function withPosition(message: string, position: number): string {
  return message.includes(`position ${position}`) ? message : `${message} at position ${position}`
}

// ---------------------------------------------------------------------------
// Compiling nodes

function compileNode(decl: ResourceDecl, node: FilterNode, leaves: Leaves): Typed {
  switch (node.kind) {
    case 'literal': {
      const value = node.value
      const type: FilterType = node.type === 'datetime' ? 'date' : node.type
      return { type, evaluate: () => value, unknownWhenNull: false, dep: null }
    }
    case 'member':
      return compileMember(decl, node, leaves)
    case 'unary':
      return memoized(leaves, compileUnary(decl, node, leaves))
    case 'binary':
      return memoized(leaves, compileBinary(decl, node, leaves))
    case 'call':
      return memoized(
        leaves,
        compileCall(node, (arg) => compileNode(decl, arg, leaves)),
      )
  }
}

function resolveMember(decl: ResourceDecl, node: MemberNode): ResolvedPath {
  try {
    return resolvePath(decl, node.path, undefined, true)
  } catch (err) {
    if (err instanceof ApiError) throw new ApiError(err.code, `$filter: ${err.message} at position ${node.pos}`)
    throw err
  }
}

function fieldType(field: FieldDecl): FilterType {
  if (field.ref !== undefined) return 'reference'
  switch (field.type) {
    case 'String':
      return 'string'
    case 'Boolean':
      return 'boolean'
    case 'Long':
    case 'Integer':
    case 'Double':
      return 'number'
    case 'Date':
      return 'date'
    default:
      return 'any'
  }
}

function compileMember(decl: ResourceDecl, node: MemberNode, leaves: Leaves): Typed {
  const path = resolveMember(decl, node)
  const get = leaves.member(path)
  if (path.many) return { type: 'list', element: fieldType(path.field), evaluate: get, unknownWhenNull: false, dep: path }
  return { type: fieldType(path.field), evaluate: (subject, context) => get(subject, context) ?? null, unknownWhenNull: false, dep: path }
}

function compileUnary(decl: ResourceDecl, node: UnaryNode, leaves: Leaves): Typed {
  const operand = compileNode(decl, node.operand, leaves)
  const evaluate = operand.evaluate
  if (node.op === 'not') {
    if (operand.type !== 'boolean' && operand.type !== 'any') throw typeError(`'not' needs a boolean, not ${describe(operand.type)}`, node.pos)
    const truth = truthOf(operand)
    return {
      type: 'boolean',
      evaluate: (rec, context) => {
        const value = truth(rec, context)
        return value === null ? null : !value
      },
      unknownWhenNull: operand.unknownWhenNull,
      dep: operand.dep,
    }
  }
  if (operand.type !== 'number' && !isWild(operand.type)) throw typeError(`'-' needs a number, not ${describe(operand.type)}`, node.pos)
  return {
    type: 'number',
    evaluate: (rec, context) => {
      const value = evaluate(rec, context)
      return typeof value === 'number' ? -value : null
    },
    unknownWhenNull: true,
    dep: operand.dep,
  }
}

function compileBinary(decl: ResourceDecl, node: BinaryNode, leaves: Leaves): Typed {
  const left = compileNode(decl, node.left, leaves)
  const right = compileNode(decl, node.right, leaves)
  switch (node.op) {
    case 'and':
    case 'or':
      return compileLogic(node.op, node.pos, left, right)
    case 'eq':
    case 'ne':
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge':
      return compileComparison(node.op, node.pos, left, right)
    case 'add':
    case 'sub':
    case 'mul':
    case 'div':
    case 'mod':
      return compileArithmetic(node.op, node.pos, left, right)
  }
}

/** A boolean operand as true, false or null (unknown): a missing value, or anything but a boolean, counts as false. */
function truthOf(operand: Typed): (subject: Subject, context: DisplayContext) => boolean | null {
  const evaluate = operand.evaluate
  if (!operand.unknownWhenNull) return (rec, context) => evaluate(rec, context) === true
  return (rec, context) => {
    const value = evaluate(rec, context)
    return value === null ? null : value === true
  }
}

/** Kleene's `and`/`or`: a false (and) or a true (or) side decides alone; otherwise an unknown side leaves the answer unknown. */
function compileLogic(op: 'and' | 'or', pos: number, left: Typed, right: Typed): Typed {
  for (const side of [left, right]) {
    if (side.type !== 'boolean' && side.type !== 'any') throw typeError(`'${op}' needs booleans, not ${describe(side.type)}`, pos)
  }
  const [a, b] = [truthOf(left), truthOf(right)]
  const decisive = op === 'or'
  const evaluate: Evaluate = (rec, context) => {
    const x = a(rec, context)
    if (x === decisive) return decisive
    const y = b(rec, context)
    if (y === decisive) return decisive
    return x === null || y === null ? null : !decisive
  }
  return { type: 'boolean', evaluate, unknownWhenNull: left.unknownWhenNull || right.unknownWhenNull, dep: depOf(left, right) }
}
