// `$filter` parser: text → FilterNode.
//
// The Ohm grammar in grammar/filter.ohm is compiled once at module load; an
// Ohm semantics operation (`ast`) turns the match into the AST of
// filterAst.ts. Limits are checked around the Ohm call: the text length and
// the raw parenthesis depth before it (so pathological nesting never reaches
// Ohm's recursive matcher), the operator tree depth after it.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ohm from 'ohm-js';
import type { BinaryOp, FilterFunctionName, FilterNode, LiteralNode } from './filterAst.js';

export const MAX_FILTER_LENGTH = 4096;
export const MAX_FILTER_DEPTH = 64;

/** The input is not a valid `$filter` expression. */
export class FilterSyntaxError extends Error {
  override name = 'FilterSyntaxError';
  constructor(message: string, readonly position: number) {
    super(message);
  }
}

/** The input is too long or too deeply nested to be evaluated. */
export class FilterLimitError extends Error {
  override name = 'FilterLimitError';
}

/** Walks up from this module (src/query or dist/src/query) to the folder holding package.json. */
function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('filterParser: package.json not found above ' + import.meta.url);
    dir = parent;
  }
  return dir;
}

const grammar = ohm.grammar(readFileSync(join(findRepoRoot(), 'grammar', 'filter.ohm'), 'utf8'));

type Node = ohm.Node;

function binary(left: Node, op: Node, right: Node): FilterNode {
  return {
    kind: 'binary',
    op: op.sourceString as BinaryOp,
    left: left['ast']() as FilterNode,
    right: right['ast']() as FilterNode,
    pos: op.source.startIdx,
  };
}

function call(fn: Node, args: Node[]): FilterNode {
  return {
    kind: 'call',
    name: fn.sourceString as FilterFunctionName,
    args: args.map((a) => a['ast']() as FilterNode),
    pos: fn.source.startIdx,
  };
}

function literal(node: Node, lit: Omit<LiteralNode, 'kind' | 'text' | 'pos'>): FilterNode {
  return { kind: 'literal', text: node.sourceString, pos: node.source.startIdx, ...lit } as LiteralNode;
}

const TIMESTAMP = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?Z?$/;

/** Epoch milliseconds of an ISO timestamp read as UTC; rejects impossible ones such as 2024-02-30. */
function timestampValue(text: string, pos: number): number {
  const m = TIMESTAMP.exec(text);
  const field = (i: number): number => Number(m?.[i] ?? 0);
  const [y, mo, d, h, mi, s] = [field(1), field(2), field(3), field(4), field(5), field(6)];
  const ms = Number((m?.[7] ?? '').padEnd(3, '0').slice(0, 3)); // finer digits than ms are dropped
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, ms);
  const roundTrips =
    date.getUTCFullYear() === y && date.getUTCMonth() + 1 === mo && date.getUTCDate() === d &&
    date.getUTCHours() === h && date.getUTCMinutes() === mi && date.getUTCSeconds() === s;
  if (!roundTrips) throw new FilterSyntaxError(`Invalid datetime '${text}' at position ${pos}`, pos);
  return date.getTime();
}

const semantics = grammar.createSemantics().addOperation<FilterNode>('ast', {
  OrExpr_binary: binary,
  AndExpr_binary: binary,
  EqExpr_binary: binary,
  RelExpr_binary: binary,
  AddExpr_binary: binary,
  MulExpr_binary: binary,
  UnaryExpr(prefixOps, primary) {
    // Fold `op1 op2 … x` into op1(op2(… x)) without recursion.
    return prefixOps.children.reduceRight<FilterNode>(
      (operand, op) => ({
        kind: 'unary',
        op: op.sourceString === 'not' ? 'not' : 'neg',
        operand,
        pos: op.source.startIdx,
      }),
      primary['ast'](),
    );
  },
  Primary_paren(_open, expr, _close) {
    return expr['ast']();
  },
  Member(list) {
    return {
      kind: 'member',
      path: list.asIteration().children.map((n) => n.sourceString),
      pos: this.source.startIdx,
    };
  },
  Call_one(fn, _open, a, _close) {
    return call(fn, [a]);
  },
  Call_two(fn, _open, a, _comma, b, _close) {
    return call(fn, [a, b]);
  },
  Call_substring(fn, _open, a, _comma, b, _optComma, optC, _close) {
    return call(fn, [a, b, ...optC.children]);
  },
  literal(lit) {
    return lit['ast']();
  },
  datetime(_open, ts, _close) {
    return literal(this, { type: 'datetime', value: timestampValue(ts.sourceString, this.source.startIdx) });
  },
  string(_open, _chars, _close) {
    return literal(this, { type: 'string', value: this.sourceString.slice(1, -1).replaceAll("''", "'") });
  },
  number(_sign, _int, _dot, _frac) {
    return literal(this, { type: 'number', value: Number(this.sourceString) });
  },
  boolean(_word) {
    return literal(this, { type: 'boolean', value: this.sourceString === 'true' });
  },
  null(_word) {
    return literal(this, { type: 'null', value: null });
  },
});

/** Deepest parenthesis nesting, ignoring parentheses inside quoted literals. */
function parenDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let quoted = false;
  for (const ch of text) {
    if (ch === "'") quoted = !quoted; // a doubled '' toggles twice: still quoted
    else if (quoted) continue;
    else if (ch === '(') max = Math.max(max, ++depth);
    else if (ch === ')') depth--;
  }
  return max;
}

function treeDepth(node: FilterNode): number {
  switch (node.kind) {
    case 'binary':
      return 1 + Math.max(treeDepth(node.left), treeDepth(node.right));
    case 'unary':
      return 1 + treeDepth(node.operand);
    case 'call':
      return 1 + Math.max(0, ...node.args.map(treeDepth));
    default:
      return 1;
  }
}

function describeFailure(text: string, match: ohm.FailedMatchResult): FilterSyntaxError {
  const pos = match.getRightmostFailurePosition();
  // The grammar refuses `name(` unless name is a supported function; say so plainly.
  const callee = text[pos] === '(' ? /([A-Za-z_]\w*)\s*$/.exec(text.slice(0, pos)) : null;
  if (callee?.[1] !== undefined) {
    return new FilterSyntaxError(`Unknown function '${callee[1]}' at position ${callee.index}`, callee.index);
  }
  const found = pos >= text.length ? 'end of input' : `'${text.slice(pos, pos + 10)}'`;
  return new FilterSyntaxError(
    `Invalid $filter at position ${pos}: expected ${match.getExpectedText()}, found ${found}`,
    pos,
  );
}

/** Parses a `$filter` expression; throws FilterSyntaxError or FilterLimitError. */
export function parseFilter(text: string): FilterNode {
  if (text.length > MAX_FILTER_LENGTH) {
    throw new FilterLimitError(`$filter is longer than ${MAX_FILTER_LENGTH} characters`);
  }
  if (parenDepth(text) > MAX_FILTER_DEPTH) {
    throw new FilterLimitError(`$filter nests parentheses deeper than ${MAX_FILTER_DEPTH}`);
  }
  const match = grammar.match(text);
  if (match.failed()) throw describeFailure(text, match);
  const ast = semantics(match)['ast']() as FilterNode;
  if (treeDepth(ast) > MAX_FILTER_DEPTH) {
    throw new FilterLimitError(`$filter nests operators deeper than ${MAX_FILTER_DEPTH}`);
  }
  return ast;
}
