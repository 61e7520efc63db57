/*
 * The arithmetic of a compiled `$filter` (add, sub, mul, div, mod) on
 * numbers and Dates (milliseconds): a Date plus or minus a number is a
 * Date, a Date minus a Date a number; any other mix is a 400 when
 * compiling. Its result is unknown when an operand is null or not a
 * number at run time, and on a division or modulo by zero (filterCompiler.ts,
 * the top).
 */
import { depOf, describe, isWild, typeError, type FilterType, type Typed } from './typedFilterNode.js'

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

export function compileArithmetic(op: keyof typeof ARITHMETIC, pos: number, left: Typed, right: Typed): Typed {
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
