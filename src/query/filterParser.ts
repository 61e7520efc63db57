/*
 * `$filter` parser: text → FilterNode.
 *
 * The Ohm grammar in grammar/filter.ohm is compiled once at module load; an
 * Ohm semantics operation (`ast`) turns the match into the AST of
 * filterAst.ts. Limits are checked around the Ohm call: the text length and
 * the raw parenthesis depth before it (so pathological nesting never reaches
 * Ohm's recursive matcher), the nesting depth while building the AST.
 *
 * Nesting is what a user writes: each enclosing pair of parentheses
 * (grouping or a function call's) and each enclosing prefix operator (`not`,
 * unary `-`) is one level; `ast(depth)` carries the count down the tree.
 * Binary operators add no level: the grammar reads a chain such as
 * `a or b or … z` as an iteration and `chain` folds it into a left-deep
 * tree without recursion. Within MAX_FILTER_LENGTH such a tree is at most
 * about a thousand nodes deep (every further operand costs at least four
 * characters, as in `''or''`), shallow enough for recursive consumers such
 * as printFilterTree and the filter compiler.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as ohm from 'ohm-js'
import type { BinaryOp, FilterFunctionName, FilterNode, LiteralNode } from './filterAst.js'
import { ownCopy } from '../engine/textPool.js'

const MAX_FILTER_LENGTH = 4096
const MAX_FILTER_DEPTH = 64

/** The input is not a valid `$filter` expression. */
export class FilterSyntaxError extends Error {
  override name = 'FilterSyntaxError'
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message)
  }
}

/** The input is too long or too deeply nested to be evaluated. */
export class FilterLimitError extends Error {
  override name = 'FilterLimitError'
}

/** Walks up from this module (src/query or dist/src/query) to the folder holding package.json. */
function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`filterParser: package.json not found above ${import.meta.url}`)
    dir = parent
  }
  return dir
}

const grammar = ohm.grammar(readFileSync(join(findRepoRoot(), 'grammar', 'filter.ohm'), 'utf8'))

type Node = ohm.Node

/** The nesting depth passed to the `ast` operation running on `node`. */
function depthOf(node: Node): number {
  return node.args.depth as number
}

/** The depth `levels` deeper than `node`'s; throws FilterLimitError beyond MAX_FILTER_DEPTH. */
function nested(node: Node, levels: number): number {
  const depth = depthOf(node) + levels
  if (depth > MAX_FILTER_DEPTH) {
    throw new FilterLimitError(`$filter nests deeper than ${MAX_FILTER_DEPTH} levels of parentheses, function calls and prefix operators`)
  }
  return depth
}

/** `first (op operand)*` folded left, in a loop: `a or b or c` → {{a or b} or c}. */
function chain(this: Node, first: Node, ops: Node, operands: Node): FilterNode {
  const depth = depthOf(this)
  let tree = first.ast(depth) as FilterNode
  ops.children.forEach((op, i) => {
    tree = {
      kind: 'binary',
      op: op.sourceString as BinaryOp,
      left: tree,
      right: operands.child(i).ast(depth) as FilterNode,
      pos: op.source.startIdx,
    }
  })
  return tree
}

function call(node: Node, fn: Node, args: Node[]): FilterNode {
  const depth = nested(node, 1)
  return {
    kind: 'call',
    name: fn.sourceString as FilterFunctionName,
    args: args.map((a) => a.ast(depth) as FilterNode),
    pos: fn.source.startIdx,
  }
}

function literal(node: Node, lit: Omit<LiteralNode, 'kind' | 'text' | 'pos'>): FilterNode {
  return { kind: 'literal', text: node.sourceString, pos: node.source.startIdx, ...lit } as LiteralNode
}

const TIMESTAMP = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?Z?$/

/** Epoch milliseconds of an ISO timestamp read as UTC; rejects impossible ones such as 2024-02-30. */
function timestampValue(text: string, pos: number): number {
  const m = TIMESTAMP.exec(text)
  const field = (i: number): number => Number(m?.[i] ?? 0)
  const [y, mo, d, h, mi, s] = [field(1), field(2), field(3), field(4), field(5), field(6)]
  const ms = Number((m?.[7] ?? '').padEnd(3, '0').slice(0, 3)) // finer digits than ms are dropped
  const date = new Date(0)
  date.setUTCFullYear(y, mo - 1, d)
  date.setUTCHours(h, mi, s, ms)
  const roundTrips = date.getUTCFullYear() === y && date.getUTCMonth() + 1 === mo && date.getUTCDate() === d && date.getUTCHours() === h && date.getUTCMinutes() === mi && date.getUTCSeconds() === s
  if (!roundTrips) throw new FilterSyntaxError(`Invalid datetime '${text}' at position ${pos}`, pos)
  return date.getTime()
}

const semantics = grammar.createSemantics().addOperation<FilterNode>('ast(depth)', {
  OrExpr: chain,
  AndExpr: chain,
  EqExpr: chain,
  RelExpr: chain,
  AddExpr: chain,
  MulExpr: chain,
  UnaryExpr(prefixOps, primary) {
    // Each prefix operator is one level of nesting for the operand.
    const innermost = primary.ast(nested(this, prefixOps.numChildren)) as FilterNode
    // Fold `op1 op2 … x` into op1(op2(… x)) without recursion.
    return prefixOps.children.reduceRight<FilterNode>(
      (operand, op) => ({
        kind: 'unary',
        op: op.sourceString === 'not' ? 'not' : 'neg',
        operand,
        pos: op.source.startIdx,
      }),
      innermost,
    )
  },
  Primary_paren(_open, expr, _close) {
    return expr.ast(nested(this, 1))
  },
  Member(list) {
    return {
      kind: 'member',
      path: list.asIteration().children.map((n) => n.sourceString),
      pos: this.source.startIdx,
    }
  },
  Call_one(fn, _open, a, _close) {
    return call(this, fn, [a])
  },
  Call_two(fn, _open, a, _comma, b, _close) {
    return call(this, fn, [a, b])
  },
  Call_substring(fn, _open, a, _comma, b, _optComma, optC, _close) {
    return call(this, fn, [a, b, ...optC.children])
  },
  literal(lit) {
    return lit.ast(depthOf(this))
  },
  datetime(_open, ts, _close) {
    return literal(this, { type: 'datetime', value: timestampValue(ts.sourceString, this.source.startIdx) })
  },
  // A string of its own, not a view into the filter text: records are compared with it (engine/textPool.ts, ownCopy).
  string(_open, _chars, _close) {
    return literal(this, { type: 'string', value: ownCopy(this.sourceString.slice(1, -1).replaceAll("''", "'")) })
  },
  number(_sign, _int, _dot, _frac) {
    return literal(this, { type: 'number', value: Number(this.sourceString) })
  },
  boolean(_word) {
    return literal(this, { type: 'boolean', value: this.sourceString === 'true' })
  },
  null(_word) {
    return literal(this, { type: 'null', value: null })
  },
})

/** Deepest parenthesis nesting, ignoring parentheses inside quoted literals. */
function parenDepth(text: string): number {
  let depth = 0
  let max = 0
  let quoted = false
  for (const ch of text) {
    if (ch === "'")
      quoted = !quoted // a doubled '' toggles twice: still quoted
    else if (quoted) continue
    else if (ch === '(') max = Math.max(max, ++depth)
    else if (ch === ')') depth--
  }
  return max
}

function describeFailure(text: string, match: ohm.FailedMatchResult): FilterSyntaxError {
  const pos = match.getRightmostFailurePosition()
  // The grammar refuses `name(` unless name is a supported function; say so plainly.
  const callee = text[pos] === '(' ? /([A-Za-z_]\w*)\s*$/.exec(text.slice(0, pos)) : null
  if (callee?.[1] !== undefined) {
    return new FilterSyntaxError(`Unknown function '${callee[1]}' at position ${callee.index}`, callee.index)
  }
  const found = pos >= text.length ? 'end of input' : `'${text.slice(pos, pos + 10)}'`
  return new FilterSyntaxError(`Invalid $filter at position ${pos}: expected ${match.getExpectedText()}, found ${found}`, pos)
}

/** Parses a `$filter` expression; throws FilterSyntaxError or FilterLimitError. */
export function parseFilter(text: string): FilterNode {
  if (text.length > MAX_FILTER_LENGTH) {
    throw new FilterLimitError(`$filter is longer than ${MAX_FILTER_LENGTH} characters`)
  }
  if (parenDepth(text) > MAX_FILTER_DEPTH) {
    throw new FilterLimitError(`$filter nests parentheses deeper than ${MAX_FILTER_DEPTH}`)
  }
  const match = grammar.match(text)
  if (match.failed()) throw describeFailure(text, match)
  return semantics(match).ast(0) as FilterNode
}
