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
 * Besides the predicate, the top-level `and` conjuncts are scanned for
 * index pins (`<indexed path> eq <literal>`) and Date bounds, which the
 * planner may use to narrow the candidates; the predicate always runs too.
 */
import { assertionFailed } from '../assert.js'
import { ApiError } from '../domain/errors.js'
import type { DisplayContext, FieldDecl, Rec, ResourceDecl } from '../domain/schema.js'
import { FILTER_FUNCTIONS, type BinaryNode, type CallNode, type FilterNode, type LiteralNode, type MemberNode, type UnaryNode, type ValueType } from './filterAst.js'
import { FilterLimitError, FilterSyntaxError, parseFilter } from './filterParser.js'
import { compareCodePoints } from './codePointOrder.js'
import { resolvePath, type ResolvedPath } from './fieldPath.js'
import type { DateRange } from '../engine/dateBuckets.js'
import type { RowBinding } from './rowScan.js'

export interface CompiledFilter {
  /** True when the record passes the filter. */
  test(rec: Rec, context: DisplayContext): boolean
  /** `test` over the rows of one collection, reading their columns (rowScan.ts); compiled once per binding and kept. */
  bindRows(binding: RowBinding): (row: number, context: DisplayContext) => boolean
  /** Indexable pins from `<indexed path> eq <literal>` (`id` too: the primary map) joined only by top-level `and`. */
  equalities: ReadonlyMap<string, unknown>
  /** Bounds on Date fields from top-level `and` conjuncts `<datefield> gt|ge|lt|le datetime'…'`. */
  ranges: ReadonlyMap<string, DateRange>
}

/** Static type of a node; 'null' is the null literal, 'any' a field of an unknown type (checked at run time only). */
type FilterType = 'string' | 'number' | 'boolean' | 'date' | 'reference' | 'null' | 'any' | 'list'

/** What a filter is evaluated on: a record, or a row of a bound collection (rowScan.ts). */
type Subject = Rec | number

type Evaluate = (subject: Subject, context: DisplayContext) => unknown

/**
 * How members are read: from records (the compiled filter's `test`), or from the rows of one collection
 * (`bindRows`: its columns, and answers remembered per text of a column: rowScan.ts). The same nodes are compiled
 * over either.
 */
interface Leaves {
  member(path: ResolvedPath): Evaluate
  /** `evaluate`, which depends on no member but `path`, as these leaves run it best. */
  memo(path: ResolvedPath, evaluate: Evaluate): Evaluate
}

const RECORD_LEAVES: Leaves = {
  member: (path) => {
    const get = path.get
    return (rec, context) => get(rec as Rec, context)
  },
  memo: (_path, evaluate) => evaluate,
}

function rowLeaves(binding: RowBinding): Leaves {
  return {
    member: (path) => binding.reader(path) as Evaluate,
    memo: (path, evaluate) => binding.memo(path, evaluate as (row: number, context: DisplayContext) => unknown) as Evaluate,
  }
}

interface Typed {
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
function depOf(...parts: Typed[]): ResolvedPath | null | false {
  let dep: ResolvedPath | null = null
  for (const part of parts) {
    if (part.dep === false) return false
    if (part.dep === null) continue
    if (dep !== null && dep.text !== part.dep.text) return false
    dep = part.dep
  }
  return dep
}

/** `typed` with its evaluation remembered per value of its one member, when it has one (Leaves.memo). */
function memoized(leaves: Leaves, typed: Typed): Typed {
  return typed.dep === null || typed.dep === false ? typed : { ...typed, evaluate: leaves.memo(typed.dep, typed.evaluate) }
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
  const boundRows = new WeakMap<RowBinding, (row: number, context: DisplayContext) => boolean>()
  return {
    test: (rec, context) => evaluate(rec, context) === true,
    bindRows: (binding) => {
      let bound = boundRows.get(binding)
      if (bound === undefined) {
        const onRows = compileNode(decl, root, rowLeaves(binding)).evaluate
        bound = (row, context) => onRows(row, context) === true
        boundRows.set(binding, bound)
      }
      return bound
    },
    equalities: extractEqualities(decl, conjuncts),
    ranges: extractRanges(decl, conjuncts),
  }
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

function typeError(problem: string, position: number): ApiError {
  return new ApiError('TL01-1105', `$filter: ${problem} at position ${position}`)
}

/** Where a node's text begins (a binary node's `pos` is its operator). */
function startOf(node: FilterNode): number {
  return node.kind === 'binary' ? startOf(node.left) : node.pos
}

function describe(type: FilterType): string {
  return type === 'null' ? 'null' : `a ${type}`
}

const isWild = (type: FilterType): boolean => type === 'any' || type === 'null'

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
      return memoized(leaves, compileCall(decl, node, leaves))
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
    case 'String': return 'string'
    case 'Boolean': return 'boolean'
    case 'Long':
    case 'Integer':
    case 'Double': return 'number'
    case 'Date': return 'date'
    default: return 'any'
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

// --- comparisons

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
  le: (a, b) => { const o = order(a, b); return o !== null && o <= 0 },
  gt: (a, b) => (order(a, b) ?? 0) > 0,
  ge: (a, b) => { const o = order(a, b); return o !== null && o >= 0 },
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

function compileComparison(op: keyof typeof COMPARE, pos: number, left: Typed, right: Typed): Typed {
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

// --- arithmetic

/** Result type of `left op right`, or undefined when the operation makes no sense; null and any act as numbers. */
function arithmeticType(op: keyof typeof ARITHMETIC, left: FilterType, right: FilterType): FilterType | undefined {
  const l = isWild(left) ? 'number' : left
  const r = isWild(right) ? 'number' : right
  if (l === 'number' && r === 'number') return 'number'
  if (op === 'add' && ((l === 'date' && r === 'number') || (l === 'number' && r === 'date'))) return 'date'
  if (op === 'sub' && l === 'date' && r === 'number') return 'date'
  if (op === 'sub' && l === 'date' && r === 'date') return 'number'
  return undefined
}

const ARITHMETIC: Record<'add' | 'sub' | 'mul' | 'div' | 'mod', (a: number, b: number) => number | null> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => (b === 0 ? null : a / b),
  mod: (a, b) => (b === 0 ? null : a % b),
}

function compileArithmetic(op: keyof typeof ARITHMETIC, pos: number, left: Typed, right: Typed): Typed {
  const type = arithmeticType(op, left.type, right.type)
  if (type === undefined) throw typeError(`'${op}' cannot combine ${describe(left.type)} with ${describe(right.type)}`, pos)
  const operate = ARITHMETIC[op]
  const [a, b] = [left.evaluate, right.evaluate]
  return {
    type,
    evaluate: (rec, context) => {
      const x = a(rec, context)
      const y = b(rec, context)
      return typeof x === 'number' && typeof y === 'number' ? operate(x, y) : null
    },
    unknownWhenNull: true,
    dep: depOf(left, right),
  }
}

// --- functions

/** A function's arguments in order; those a call leaves out are undefined. */
type Implementation = (a: unknown, b: unknown, c: unknown) => unknown

const str = (value: unknown): string => value as string
const int = (value: unknown): number => Math.trunc(value as number)

/** substring(s, start[, length]), 0-based; a negative start counts as 0, a start past the end or a negative length gives ''. */
function substring(s: string, start: number, length?: number): string {
  const from = Math.max(0, start)
  if (from > s.length || (length !== undefined && length < 0)) return ''
  return length === undefined ? s.slice(from) : s.slice(from, from + length)
}

const FUNCTIONS: Record<CallNode['name'], Implementation> = {
  substring: (s, start, length) => substring(str(s), int(start), length === undefined ? undefined : int(length)),
  substringof: (needle, haystack) => str(haystack).includes(str(needle)),
  startswith: (s, prefix) => str(s).startsWith(str(prefix)),
  endswith: (s, suffix) => str(s).endsWith(str(suffix)),
  length: (s) => str(s).length,
  indexof: (s, part) => str(s).indexOf(str(part)),
  tolower: (s) => str(s).toLowerCase(),
  toupper: (s) => str(s).toUpperCase(),
  concat: (a, b) => str(a) + str(b),
}

interface Argument {
  /** The `typeof` the value must have; a left-out argument is undefined. */
  readonly expected: ValueType | 'undefined'
  readonly evaluate: Evaluate
  readonly compiled: Typed | null
}

/** An argument the call leaves out. */
const ABSENT: Argument = { expected: 'undefined', evaluate: () => undefined, compiled: null }

function compileCall(decl: ResourceDecl, node: CallNode, leaves: Leaves): Typed {
  const signature = FILTER_FUNCTIONS[node.name]
  if (node.args.length < signature.minArgs || node.args.length > signature.maxArgs) {
    const expected = signature.minArgs === signature.maxArgs ? `${signature.minArgs}` : `${signature.minArgs} to ${signature.maxArgs}`
    throw typeError(`${node.name} takes ${expected} arguments, not ${node.args.length}`, node.pos)
  }
  const argTypes: readonly ValueType[] = signature.argTypes
  const args = node.args.map((arg, index): Argument => {
    const compiled = compileNode(decl, arg, leaves)
    const expected = argTypes[index] as ValueType
    if (compiled.type !== expected && !isWild(compiled.type)) {
      throw typeError(`argument ${index + 1} of ${node.name} must be a ${expected}, not ${describe(compiled.type)}`, startOf(arg))
    }
    return { expected, evaluate: compiled.evaluate, compiled }
  })
  const implementation = FUNCTIONS[node.name]
  // Read without building an array (this runs once per record in a scan); no function takes more than three.
  if (args.length > 3) assertionFailed(`${node.name} is declared with more than three arguments`)
  const [first = ABSENT, second = ABSENT, third = ABSENT] = args
  return {
    type: signature.returns,
    evaluate: (rec, context) => {
      // null, missing, or a stored value of another type: the call's value is unknown.
      const a = first.evaluate(rec, context)
      if (typeof a !== first.expected) return null
      const b = second.evaluate(rec, context)
      if (typeof b !== second.expected) return null
      const c = third.evaluate(rec, context)
      if (typeof c !== third.expected) return null
      return implementation(a, b, c)
    },
    unknownWhenNull: true,
    dep: depOf(...args.flatMap((arg) => (arg.compiled === null ? [] : [arg.compiled]))),
  }
}

// ---------------------------------------------------------------------------
// Index pins and date bounds from the top-level `and`

function topLevelConjuncts(node: FilterNode): FilterNode[] {
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

function extractEqualities(decl: ResourceDecl, conjuncts: readonly FilterNode[]): Map<string, unknown> {
  const pins = new Map<string, unknown>()
  for (const conjunct of conjuncts) {
    const match = memberAgainstLiteral(conjunct)
    if (match === undefined || match.op !== 'eq') continue
    const indexed = resolvePath(decl, match.member.path, undefined, true).indexedField
    if (indexed !== null) pins.set(indexed, match.literal.value)
  }
  return pins
}

function extractRanges(decl: ResourceDecl, conjuncts: readonly FilterNode[]): Map<string, DateRange> {
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
