/*
 * The functions a `$filter` may call (substringof, startswith, tolower…):
 * their implementations, one table keyed by name, matching the
 * signatures of FILTER_FUNCTIONS (filterAst.ts: argument count and types,
 * result type). A call is checked against its signature when
 * compiling; at run time an argument that is null, missing or of another
 * type makes the call's value unknown (filterCompiler.ts, the top), so an
 * implementation only ever sees arguments of the declared types.
 */
import { assertionFailed } from '../assert.js'
import { FILTER_FUNCTIONS, type CallNode, type FilterNode, type ValueType } from './filterAst.js'
import { depOf, describe, isWild, startOf, typeError, type Evaluate, type Typed } from './typedFilterNode.js'

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

/** A call; `compileArgument` compiles each argument node in turn (filterCompiler.ts compileNode). */
export function compileCall(node: CallNode, compileArgument: (arg: FilterNode) => Typed): Typed {
  const signature = FILTER_FUNCTIONS[node.name]
  if (node.args.length < signature.minArgs || node.args.length > signature.maxArgs) {
    const expected = signature.minArgs === signature.maxArgs ? `${signature.minArgs}` : `${signature.minArgs} to ${signature.maxArgs}`
    throw typeError(`${node.name} takes ${expected} arguments, not ${node.args.length}`, node.pos)
  }
  const argTypes: readonly ValueType[] = signature.argTypes
  const args = node.args.map((arg, index): Argument => {
    const compiled = compileArgument(arg)
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
