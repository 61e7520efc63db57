/*
 * Tests the `$filter` grammar and parser: the conformance corpus
 * (test/fixtures/filter-conformance/: cases from public OData test suites,
 * with their provenance in its README), then precedence, literals, errors, limits
 * and function arities that the corpus does not pin down.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { FILTER_FUNCTIONS } from '../../../src/query/filterAst.js'
import type { FilterNode } from '../../../src/query/filterAst.js'
import { FilterLimitError, FilterSyntaxError, parseFilter } from '../../../src/query/filterParser.js'
import { printFilterTree } from '../../../src/query/filterTree.js'

interface CorpusCase {
  id: string
  input: string
  expect: 'ok' | 'fail'
  tree?: string
  note?: string
}

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir)
  return dir
}

const corpusDir = process.env.CONFORMANCE_DIR ?? join(repoRoot(), 'test', 'fixtures', 'filter-conformance')
const corpus: CorpusCase[] = readFileSync(join(corpusDir, 'filter-cases.jsonl'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as CorpusCase)

/** `(expr)/X`: Olingo accepts it, our path-only `/` may reject it (corpus README). */
const slashAfterParen = /\)\s*\//

const tree = (text: string): string => printFilterTree(parseFilter(text))

function parseError(text: string): unknown {
  try {
    parseFilter(text)
  } catch (err) {
    return err
  }
  return undefined
}

t.test('conformance corpus', async (t) => {
  t.equal(corpus.length, 309, 'corpus has the documented number of cases')
  for (const c of corpus) {
    const label = `${c.id} ${JSON.stringify(c.input)}`
    if (c.expect === 'fail') {
      const err = parseError(c.input)
      t.ok(err instanceof FilterSyntaxError || err instanceof FilterLimitError, `rejects ${label}`)
      continue
    }
    if (slashAfterParen.test(c.input)) {
      const err = parseError(c.input)
      if (err === undefined) t.equal(tree(c.input), c.tree, `either way: tree of ${label}`)
      else t.ok(err instanceof FilterSyntaxError, `either way: rejects ${label}`)
      continue
    }
    let node: FilterNode | undefined
    t.doesNotThrow(() => (node = parseFilter(c.input)), `parses ${label}`)
    if (c.tree !== undefined && node !== undefined) t.equal(printFilterTree(node), c.tree, `tree of ${label}`)
  }
})

t.test('precedence not covered by the corpus', async (t) => {
  const cases: Array<[string, string]> = [
    ['a eq b lt c', '{a eq {b lt c}}'],
    ['a lt b eq c', '{{a lt b} eq c}'],
    ['a ne b ge c', '{a ne {b ge c}}'],
    ['a add b mul c', '{a add {b mul c}}'],
    ['a mul b add c', '{{a mul b} add c}'],
    ['a sub b div c mod d', '{a sub {{b div c} mod d}}'],
    ['a lt b add c', '{a lt {b add c}}'],
    ['a sub b gt c', '{{a sub b} gt c}'],
    ['a add b sub c add d', '{{{a add b} sub c} add d}'],
    ['not a/b', '{not {a/b}}'],
    ['-a/b', '{- {a/b}}'],
    ['-a/b/c mul 2', '{{- {{a/b}/c}} mul 2}'],
    ['not a eq b', '{{not a} eq b}'],
    ['- 5', '{- 5}'],
    ['-5', '-5'],
    ['--5', '{- -5}'],
    ['a sub -5', '{a sub -5}'],
    ['1.50 add -0.25', '{1.50 add -0.25}'],
    ['a/b eq c/d/e', '{{a/b} eq {{c/d}/e}}'],
    ['substring(a/b, 1 add 2, length(c))', '{substring({a/b},{1 add 2},{length(c)})}'],
  ]
  for (const [input, expected] of cases) t.equal(tree(input), expected, input)
})

t.test('keywords and identifiers', async (t) => {
  t.equal(tree('order eq 1'), '{order eq 1}', 'keyword prefix in a property name')
  t.equal(tree('notes ne null'), '{notes ne null}')
  t.equal(tree('trueish or nullable'), '{trueish or nullable}')
  t.equal(tree('not(true)'), '{not true}')
  t.equal(tree('  a   eq  b  '), '{a eq b}', 'spaces around tokens and the whole input')
  t.equal(tree('length eq 3'), '{length eq 3}', 'a function name without ( is a property')
  t.equal(tree('datetime eq 3'), '{datetime eq 3}')
  t.match(parseFilter('TRUE'), { kind: 'member', path: ['TRUE'] }, 'TRUE is a property name, not a literal')
  for (const input of ['a EQ b', 'a Eq b', 'a eq b AND c', 'NOT a', 'Concat(a,b)']) {
    t.ok(parseError(input) instanceof FilterSyntaxError, `keywords are lower-case: ${input}`)
  }
  t.ok(parseError('eq eq 1') instanceof FilterSyntaxError, 'a keyword is not a property')
})

t.test('literals', async (t) => {
  t.match(parseFilter("'O''Neil'"), { kind: 'literal', type: 'string', value: "O'Neil", text: "'O''Neil'" })
  t.match(parseFilter("''''"), { type: 'string', value: "'" })
  t.match(parseFilter("''"), { type: 'string', value: '' })
  t.match(parseFilter('true'), { type: 'boolean', value: true })
  t.match(parseFilter('null'), { type: 'null', value: null })
  t.match(parseFilter('-12.5'), { type: 'number', value: -12.5, text: '-12.5' })
  t.match(parseFilter('1234567890123456789'), { type: 'number', text: '1234567890123456789' })
  t.equal(BigInt((parseFilter('1234567890123456789') as { text: string }).text), 1234567890123456789n)

  const dt = (input: string): unknown => (parseFilter(input) as { value: unknown }).value
  t.equal(dt("datetime'2024-01-02T03:04'"), Date.UTC(2024, 0, 2, 3, 4))
  t.equal(dt("datetime'2024-01-02T03:04:05'"), Date.UTC(2024, 0, 2, 3, 4, 5))
  t.equal(dt("datetime'2024-01-02T03:04:05.123'"), Date.UTC(2024, 0, 2, 3, 4, 5, 123))
  t.equal(dt("datetime'2024-01-02T03:04:05.5Z'"), Date.UTC(2024, 0, 2, 3, 4, 5, 500))
  t.equal(dt("datetime'2024-01-02T03:04Z'"), Date.UTC(2024, 0, 2, 3, 4))
  t.equal(dt("datetime'2024-02-29T00:00'"), Date.UTC(2024, 1, 29))
  t.equal(tree("datetime'2024-01-02T03:04:05.123Z'"), "datetime'2024-01-02T03:04:05.123Z'")
  for (const bad of [
    "datetime'2024-01-02'",
    "datetime'2024-01-02T03'",
    "datetime'2024-13-01T00:00'",
    "datetime'2023-02-29T00:00'",
    "datetime'2024-01-02T24:00'",
    "datetime'2024-01-02T03:04:05.'",
    "datetime'2024-01-02T03:04+01:00'",
    "DateTime'2024-01-02T03:04'",
  ]) {
    t.ok(parseError(bad) instanceof FilterSyntaxError, `rejects ${bad}`)
  }
})

t.test('AST shape and positions', async (t) => {
  t.same(parseFilter("a/b eq 'x'"), {
    kind: 'binary',
    op: 'eq',
    pos: 4,
    left: { kind: 'member', path: ['a', 'b'], pos: 0 },
    right: { kind: 'literal', type: 'string', value: 'x', text: "'x'", pos: 7 },
  })
  t.match(parseFilter(' - not x'), { kind: 'unary', op: 'neg', pos: 1, operand: { op: 'not', pos: 3 } })
  t.match(parseFilter('x eq tolower(y)'), { right: { kind: 'call', name: 'tolower', pos: 5, args: [{ path: ['y'] }] } })
})

t.test('syntax errors carry a position and say what was expected', async (t) => {
  const cases: Array<[string, number, RegExp]> = [
    ['', 0, /position 0: expected .*property name/],
    ['a eq', 4, /position 4: expected .*found end of input/],
    ["concat('a' 'b')", 11, /expected "," or an operator/],
    ['a eq b b', 7, /position 7/],
    ['(123', 4, /expected .*"\)"/],
    ["'O'Neil'", 3, /position 3/],
    ['42.', 2, /position 2/],
    ['year(2020)', 0, /Unknown function 'year'/],
    ['a eq replace (b, 1, 2)', 5, /Unknown function 'replace'/],
  ]
  for (const [input, position, message] of cases) {
    const err = parseError(input)
    t.ok(err instanceof FilterSyntaxError, `${JSON.stringify(input)} is a syntax error`)
    if (err instanceof FilterSyntaxError) {
      t.equal(err.position, position, `position of ${JSON.stringify(input)}`)
      t.match(err.message, message, `message of ${JSON.stringify(input)}`)
    }
  }
})

t.test('function arities', async (t) => {
  for (const input of ['length()', "concat('a')", "concat('a','b','c')", 'substring(a,1,2,3)', 'substring(a)']) {
    t.ok(parseError(input) instanceof FilterSyntaxError, `rejects ${input}`)
  }
  // The grammar's arities must agree with FILTER_FUNCTIONS, which the compiler reads.
  for (const [name, fn] of Object.entries(FILTER_FUNCTIONS)) {
    for (let n = 0; n <= 4; n++) {
      const input = `${name}(${Array.from({ length: n }, (_, i) => `a${i}`).join(', ')})`
      const accepted = parseError(input) === undefined
      t.equal(accepted, n >= fn.minArgs && n <= fn.maxArgs, `${input} accepted: ${accepted}`)
    }
  }
})

t.test('limits', async (t) => {
  t.doesNotThrow(() => parseFilter(`a eq '${'x'.repeat(4096 - 7)}'`), 'exactly 4096 characters')
  t.throws(() => parseFilter(`a eq '${'x'.repeat(4096 - 6)}'`), FilterLimitError, '4097 characters')

  const parens = (n: number): string => `${'('.repeat(n)}x${')'.repeat(n)}`
  t.equal(tree(parens(64)), 'x', '64 nested parentheses')
  t.throws(() => parseFilter(parens(65)), FilterLimitError, '65 nested parentheses')
  t.throws(() => parseFilter('('.repeat(100000)), FilterLimitError, '100000 open parentheses')
  t.throws(() => parseFilter('('.repeat(4000)), FilterLimitError, '4000 open parentheses, within the length limit')
  t.equal(tree("'((((((((' eq x"), "{'((((((((' eq x}", 'parentheses inside strings do not count')

  t.equal(tree(`${'tolower('.repeat(64)}x${')'.repeat(64)}`), `${'{tolower('.repeat(64)}x${')}'.repeat(64)}`, '64 nested calls')
  t.throws(() => parseFilter(`${'tolower('.repeat(65)}x${')'.repeat(65)}`), FilterLimitError, '65 nested calls')

  // Each prefix operator is a level too, and counts together with parentheses.
  const nots = (n: number): string => `${'not '.repeat(n)}x`
  t.doesNotThrow(() => parseFilter(nots(64)), '64 prefix operators')
  t.throws(() => parseFilter(nots(65)), FilterLimitError, '65 prefix operators')
  t.throws(() => parseFilter(`${'-'.repeat(4095)}x`), FilterLimitError, '4095 unary minus signs')
  const minusesThenParen = `${'-'.repeat(60)}(`
  t.throws(() => parseFilter(`${minusesThenParen.repeat(60)}x${')'.repeat(60)}`), FilterLimitError)
  const notParens = (n: number): string => `${'not ('.repeat(n)}x${')'.repeat(n)}`
  t.doesNotThrow(() => parseFilter(notParens(32)), '32 × `not (`: 64 levels')
  t.throws(() => parseFilter(notParens(33)), FilterLimitError, '33 × `not (`: 66 levels, only 33 parentheses')
  t.doesNotThrow(() => parseFilter(`${'- '.repeat(39)}${'length('.repeat(25)}x${')'.repeat(25)}`), '39 minus signs and 25 calls')
  t.throws(() => parseFilter(`${'- '.repeat(40)}${'length('.repeat(25)}x${')'.repeat(25)}`), FilterLimitError, '40 minus signs and 25 calls')
  t.doesNotThrow(() => parseFilter(Array.from({ length: 300 }, () => 'not x').join(' and ')), 'separate runs do not add up')

  // Binary operators are not nesting: a flat chain is limited by the length only.
  const chain = (n: number): string => Array.from({ length: n }, (_, i) => `a${i}`).join(' or ')
  t.ok(chain(500).length <= 4096, '500 terms fit in 4096 characters')
  t.equal(tree(chain(500)), `${'{'.repeat(499)}a0${Array.from({ length: 499 }, (_, i) => ` or a${i + 1}}`).join('')}`, '500-term flat chain is left-deep')
  t.doesNotThrow(() => parseFilter(Array.from({ length: 300 }, (_, i) => `id eq ${i}`).join(' or ')), '300 comparisons joined by or')
  t.doesNotThrow(() => parseFilter(`${Array.from({ length: 400 }, (_, i) => `a${i}`).join(' add ')} gt 0`), '400-term sum')

  // The deepest trees the limits allow: `''or''or…` spends four characters per
  // term, and 63 prefix operators plus a parenthesis nest it once more. Every
  // recursive consumer of the AST must cope with this depth.
  const depth = (node: FilterNode): number => {
    let max = 0
    const stack: Array<[FilterNode, number]> = [[node, 1]]
    for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
      const [n, d] = item
      max = Math.max(max, d)
      if (n.kind === 'binary') stack.push([n.left, d + 1], [n.right, d + 1])
      else if (n.kind === 'unary') stack.push([n.operand, d + 1])
      else if (n.kind === 'call') for (const arg of n.args) stack.push([arg, d + 1])
    }
    return max
  }
  const dense = Array.from({ length: 1024 }, () => "''").join('or')
  t.equal(dense.length, 4094)
  const denseTree = parseFilter(dense)
  t.equal(depth(denseTree), 1024, '1023 operators deep')
  t.equal(printFilterTree(denseTree), `${'{'.repeat(1023)}''${" or ''}".repeat(1023)}`, 'printFilterTree on the flat chain')
  const wrapped = `${'-'.repeat(63)}(${Array.from({ length: 1000 }, () => "''").join('or')})`
  t.ok(wrapped.length <= 4096)
  const wrappedTree = parseFilter(wrapped)
  t.equal(depth(wrappedTree), 63 + 1000, 'prefix operators above a long chain')
  t.equal(printFilterTree(wrappedTree), `${'{- '.repeat(63)}${'{'.repeat(999)}''${" or ''}".repeat(999)}${'}'.repeat(63)}`, 'printFilterTree under prefix operators')
})
