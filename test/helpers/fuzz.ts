/*
 * Shared pieces of the fuzzers: a seeded PRNG (mulberry32) so every run can
 * be repeated from the seed it prints, random picks, text mutations, and
 * the check that an error answer has the body of ARCHITECTURE.md §4.
 *
 * FUZZ_SEED fixes the seed (default: a new one per run, printed);
 * FUZZ_INPUTS sets how many inputs each fuzzer tries (the long form,
 * `npm run test:fuzz`, sets 100000).
 */
import type { Test } from 'tap'

export function fuzzSeed(): number {
  const fixed = process.env.FUZZ_SEED
  return fixed !== undefined && fixed !== '' ? Number(fixed) >>> 0 : (Math.random() * 2 ** 32) >>> 0
}

export function fuzzInputs(shortForm: number): number {
  const text = process.env.FUZZ_INPUTS
  return text !== undefined && text !== '' ? Number(text) : shortForm
}

export class Random {
  private state: number

  constructor(readonly seed: number) {
    this.state = seed >>> 0
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let value = this.state
    value = Math.imul(value ^ (value >>> 15), value | 1)
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61)
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296
  }

  int(below: number): number {
    return Math.floor(this.next() * below)
  }

  chance(probability: number): boolean {
    return this.next() < probability
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from nothing')
    return items[this.int(items.length)] as T
  }
}

/** Characters that matter to parsers: quotes, brackets, separators, escapes, controls, non-ASCII, a lone surrogate. */
const NASTY = [
  "'",
  '"',
  '(',
  ')',
  ',',
  '/',
  '\\',
  ' ',
  '\t',
  '\n',
  '\r',
  '\0',
  '-',
  '.',
  ':',
  '%',
  '&',
  '=',
  '?',
  '#',
  '<',
  '>',
  '{',
  '}',
  '[',
  ']',
  'é',
  'ß',
  '€',
  '😀',
  '\u202e',
  '\ud800',
  '\ufeff',
  'x',
  '0',
  '9',
  'e',
  'E',
  'T',
  'Z',
  '$',
  '_',
]

/** One random edit of `text`: delete, insert, duplicate, swap, truncate, repeat or splice a token. */
function mutate(random: Random, text: string, tokens: readonly string[] = []): string {
  const at = random.int(text.length + 1)
  switch (random.int(8)) {
    case 0:
      return text.slice(0, at) + text.slice(at + 1 + random.int(3))
    case 1:
      return text.slice(0, at) + random.pick(NASTY) + text.slice(at)
    case 2: {
      const end = Math.min(text.length, at + 1 + random.int(12))
      return text.slice(0, end) + text.slice(at, end) + text.slice(end)
    }
    case 3: {
      const other = random.int(text.length + 1)
      const [low, high] = at < other ? [at, other] : [other, at]
      return text.slice(0, low) + text.slice(high, high + 1) + text.slice(low + 1, high) + text.slice(low, low + 1) + text.slice(high + 1)
    }
    case 4:
      return text.slice(0, at)
    case 5:
      return text.slice(0, at) + random.pick(NASTY).repeat(1 + random.int(200)) + text.slice(at)
    case 6:
      return tokens.length === 0 ? text : `${text.slice(0, at)} ${random.pick(tokens)} ${text.slice(at)}`
    default:
      return text.slice(0, at) + String.fromCharCode(random.int(0x10000)) + text.slice(at)
  }
}

export function mutateMany(random: Random, text: string, tokens: readonly string[] = []): string {
  let result = text
  for (let count = 1 + random.int(4); count > 0; count -= 1) result = mutate(random, result, tokens)
  return result
}

const ERROR_CODE = /^TL01-\d{4}$/

/** True when `json` is an error body of ARCHITECTURE.md §4 whose status and code agree with the HTTP status. */
export function isErrorBody(json: unknown, httpStatus: number): boolean {
  if (typeof json !== 'object' || json === null) return false
  const body = json as Record<string, unknown>
  return (
    body.status === httpStatus &&
    typeof body.code === 'string' &&
    ERROR_CODE.test(body.code) &&
    typeof body.message === 'string' &&
    'description' in body &&
    'constraintViolation' in body &&
    Array.isArray(body.constraintViolations)
  )
}

/** Fails the test once with the seed and the input that broke it; true when the check held. */
export function expectWithSeed(t: Test, holds: boolean, seed: number, what: string, input: unknown): boolean {
  if (holds) return true
  t.fail(`${what} (seed ${seed}; rerun with FUZZ_SEED=${seed}): ${JSON.stringify(input).slice(0, 600)}`)
  return false
}
