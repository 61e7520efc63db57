/*
 * jsonListBody writes a list answer a chunk at a time into a lent buffer
 * (json/answerBuffers.ts; test/api/answerBuffers.test.ts tests the lending). Its bytes must be exactly `Buffer.from(JSON.stringify(list))`:
 * for empty and one-element lists, for values JSON turns into null, for
 * text that UTF-8 needs two, three and four bytes for, for objects with
 * toJSON, for lists much longer than one chunk, for elements larger than
 * the buffer, and for an answer kept while the next one is built.
 * With JsonFragments in the list (at any depth), the bytes must be what
 * JSON.stringify gives with each fragment replaced by the value of its
 * text, also when data contains the very marker a fragment is written as.
 * jsonValueBytes does the same for any one value.
 */
import t from 'tap'
import { jsonListBody, jsonValueBytes } from '../../../src/json/bytes.js'
import { OutDate } from '../../../src/domain/values.js'
import { FRAGMENT_MARKER, JsonFragment } from '../../../src/json/fragment.js'

/** A body as bytes (long lists come as a string). */
function bodyBytes(body: Buffer | string): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.from(body)
}

function expected(items: readonly unknown[]): Buffer {
  return Buffer.from(JSON.stringify(items))
}

function sameBytes(items: readonly unknown[], what: string): void {
  t.ok(bodyBytes(jsonListBody(items)).equals(expected(items)), what)
}

/** A record-like object of about `bytes` of JSON text, with text that needs 1 to 4 bytes per character in UTF-8. */
function row(index: number, bytes = 300): Record<string, unknown> {
  return {
    id: `row-${index}`,
    version: index,
    description: `é€😀 "quoted" \\ \n ${'x'.repeat(Math.max(0, bytes - 100))}`,
    done: index % 2 === 0,
    price: index % 3 === 0 ? null : index / 7,
    start: new OutDate(1_700_000_000_000 + index),
    nested: { id: `n-${index % 5}`, name: 'Ünïcödé' },
  }
}

t.test('small lists and values JSON turns into null', async () => {
  sameBytes([], 'empty')
  sameBytes([1], 'one number')
  sameBytes(['a'], 'one string')
  sameBytes([null, undefined, () => 1, Symbol('s'), Number.NaN, Infinity], 'values written as null')
  sameBytes([[], {}, [[]], [{}]], 'empty nested lists and objects')
  sameBytes([row(1)], 'one row')
})

t.test('lists of many chunks', async () => {
  for (const [count, bytes] of [
    [100, 2800],
    [1000, 300],
    [5000, 40],
    [3, 100_000],
  ] as const) {
    sameBytes(
      Array.from({ length: count }, (_, index) => row(index, bytes)),
      `${count} rows of about ${bytes} B`,
    )
  }
})

t.test('an element larger than the answer buffer, a long answer, then small answers again', async () => {
  sameBytes([row(1), row(2, 3_000_000), row(3)], 'a 3 MB element among small ones')
  sameBytes(
    Array.from({ length: 400 }, (_, index) => row(index, 30_000)),
    'a 12 MB answer (past the answer buffer it goes on as strings)',
  )
  sameBytes(
    Array.from({ length: 100 }, (_, index) => row(index)),
    'a small answer afterwards',
  )
})

t.test('an answer not given back is untouched by the next one', async () => {
  const first = Array.from({ length: 200 }, (_, index) => row(index, 500))
  const firstBytes = bodyBytes(jsonListBody(first))
  jsonListBody(Array.from({ length: 200 }, (_, index) => row(index + 1000, 700)))
  t.ok(firstBytes.equals(expected(first)))
})

/** The value with every JsonFragment (at any depth) replaced by the value of its text. */
function withFragmentsParsed(value: unknown): unknown {
  if (value instanceof JsonFragment) return value.value()
  if (Array.isArray(value)) return value.map(withFragmentsParsed)
  if (typeof value === 'object' && value !== null && !(value instanceof OutDate)) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withFragmentsParsed(inner)]))
  }
  return value
}

function fragmentOf(value: unknown): JsonFragment {
  return new JsonFragment(Buffer.from(JSON.stringify(value)))
}

t.test('fragments are copied in where they stand', async (t) => {
  const user = fragmentOf({ id: 'u1', name: 'Zoë 😀', start: new OutDate(5) })
  const project = fragmentOf({ id: 'p1', client: { id: 'c1', name: 'Globex "GmbH"' } })
  const stub = fragmentOf({ id: 'p2' })
  const cases: [string, unknown[]][] = [
    ['an empty row', [{}]],
    ['a fragment as the element', [user, 1, stub]],
    ['fragments only, as kept rows are', Array.from({ length: 100 }, (_, index) => (index % 2 === 0 ? user : project))],
    ['runs of objects between fragments', [user, { id: 'a' }, { id: 'b', project }, stub, stub, { id: 'c' }, user]],
    ['a fragment larger than the answer buffer as the element', [user, fragmentOf({ text: 'w'.repeat(1_500_000) }), { id: 'r7', user }, project]],
    ['a row of fragments only', [{ user, project }]],
    ['a fragment first, between and last', [{ user, id: 'r1', project, done: false, stub }]],
    ['values JSON leaves out or writes as null', [{ id: 'r2', gone: undefined, call: () => 1, missing: null, nan: Number.NaN, user }]],
    ['keys and text that need escaping', [{ 'quote"key': 'line\nbreak', 'é€😀': '\u0000', nested: { list: [1, 'two', null] }, project }]],
    ['fragments deeper down', [{ id: 'r3', nested: { user, list: [stub, { project }] } }]],
    ['dates with toJSON', [{ start: new OutDate(1_700_000_000_000), user }]],
    ['many rows sharing fragments', Array.from({ length: 500 }, (_, index) => ({ id: `r${index}`, user, n: index, project: index % 2 === 0 ? project : stub, text: 'x'.repeat(index) }))],
    ['rows larger than the answer buffer', Array.from({ length: 40 }, (_, index) => ({ id: `r${index}`, user, text: 'y'.repeat(100_000) }))],
    [
      'a fragment larger than the answer buffer',
      [
        { id: 'r6', user },
        { big: fragmentOf({ text: 'z'.repeat(2_000_000) }), user },
      ],
    ],
    [
      'data that is exactly the marker, as a value and as a key',
      [
        { id: 'r4', user, text: FRAGMENT_MARKER },
        { [FRAGMENT_MARKER]: 1, project },
      ],
    ],
    ['data that holds the marker inside a longer text', [{ id: 'r5', user, text: `a${FRAGMENT_MARKER}b` }]],
  ]
  for (const [what, items] of cases) {
    t.ok(bodyBytes(jsonListBody(items)).equals(Buffer.from(JSON.stringify(withFragmentsParsed(items)))), what)
    const value = { what, items, first: items[0] ?? null }
    t.ok(jsonValueBytes(value).equals(Buffer.from(JSON.stringify(withFragmentsParsed(value)))), `${what}, inside an object`)
  }
  for (const value of [user, 'text', 12.5, null, true, [], {}]) {
    t.ok(jsonValueBytes(value).equals(Buffer.from(JSON.stringify(withFragmentsParsed(value)))), `the value ${JSON.stringify(withFragmentsParsed(value))}`)
  }
  t.throws(() => JSON.stringify({ user }), /JsonFragment/, 'a fragment cannot be written by JSON.stringify alone')
})
