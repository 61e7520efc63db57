/*
 * AST of a parsed `$filter` expression: a discriminated union on `kind`.
 * Every node carries `pos`, its 0-based character offset in the input text
 * (for binary nodes: the offset of the operator keyword). Parentheses leave
 * no node. FILTER_FUNCTIONS is the single table of supported functions,
 * read by the parser tests (arity) and by the filter compiler (types).
 */
export type BinaryOp = 'or' | 'and' | 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge' | 'add' | 'sub' | 'mul' | 'div' | 'mod'

type UnaryOp = 'not' | 'neg'

export interface BinaryNode {
  kind: 'binary'
  op: BinaryOp
  left: FilterNode
  right: FilterNode
  pos: number
}

export interface UnaryNode {
  kind: 'unary'
  op: UnaryOp
  operand: FilterNode
  pos: number
}

/** A property path: `a/b/c` is one node with path ['a', 'b', 'c']. */
export interface MemberNode {
  kind: 'member'
  path: string[]
  pos: number
}

interface LiteralBase {
  kind: 'literal'
  /** The literal exactly as written, e.g. `'O''Neil'`, `-1`, `datetime'2024-01-02T03:04'`. */
  text: string
  pos: number
}

export type LiteralNode = LiteralBase &
  (
    | { type: 'string'; value: string }
    /** `text` keeps integers beyond 2^53 exactly; `value` is the nearest double. */
    | { type: 'number'; value: number }
    | { type: 'boolean'; value: boolean }
    | { type: 'null'; value: null }
    /** Epoch milliseconds; a timestamp without `Z` is read as UTC. */
    | { type: 'datetime'; value: number }
  )

export interface CallNode {
  kind: 'call'
  name: FilterFunctionName
  args: FilterNode[]
  pos: number
}

export type FilterNode = BinaryNode | UnaryNode | MemberNode | LiteralNode | CallNode

export type ValueType = 'string' | 'number' | 'boolean'

export interface FilterFunction {
  minArgs: number
  maxArgs: number
  returns: ValueType
  /** Expected type of each argument position (length is maxArgs). */
  argTypes: readonly ValueType[]
}

export const FILTER_FUNCTIONS = {
  substring: { minArgs: 2, maxArgs: 3, returns: 'string', argTypes: ['string', 'number', 'number'] },
  substringof: { minArgs: 2, maxArgs: 2, returns: 'boolean', argTypes: ['string', 'string'] },
  startswith: { minArgs: 2, maxArgs: 2, returns: 'boolean', argTypes: ['string', 'string'] },
  endswith: { minArgs: 2, maxArgs: 2, returns: 'boolean', argTypes: ['string', 'string'] },
  length: { minArgs: 1, maxArgs: 1, returns: 'number', argTypes: ['string'] },
  indexof: { minArgs: 2, maxArgs: 2, returns: 'number', argTypes: ['string', 'string'] },
  tolower: { minArgs: 1, maxArgs: 1, returns: 'string', argTypes: ['string'] },
  toupper: { minArgs: 1, maxArgs: 1, returns: 'string', argTypes: ['string'] },
  concat: { minArgs: 2, maxArgs: 2, returns: 'string', argTypes: ['string', 'string'] },
} as const satisfies Record<string, FilterFunction>

export type FilterFunctionName = keyof typeof FILTER_FUNCTIONS
