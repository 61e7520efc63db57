/*
 * compareCodePoints against the definition: the strings' code points
 * compared one by one (a lone surrogate is its own code point), a prefix
 * first. Named cases for the places where code unit order differs (astral
 * characters against U+E000..U+FFFF), then random strings drawn from the
 * ranges where the orders meet. $orderby's comparison uses it (the
 * $filter comparisons are tested in filterCompiler.test.ts).
 */
import t from 'tap'
import { compareCodePoints } from '../../../src/query/codePointOrder.js'
import { compareValues } from '../../../src/query/orderBy.js'

/** The definition, slowly: arrays of code points compared lexicographically. */
function byDefinition(a: string, b: string): number {
  const x = [...a].map((character) => character.codePointAt(0) as number)
  const y = [...b].map((character) => character.codePointAt(0) as number)
  for (let index = 0; index < Math.min(x.length, y.length); index += 1) {
    if (x[index] !== y[index]) return (x[index] as number) < (y[index] as number) ? -1 : 1
  }
  return Math.sign(x.length - y.length)
}

t.test('named cases', async (t) => {
  const cases: ReadonlyArray<readonly [string, string, number, string]> = [
    ['\u{1F600}', '\uFFFF', 1, 'an astral character sorts above U+FFFF (code unit order says below)'],
    ['\u{10000}', '\uE000', 1, 'the first astral character sorts above the first private-use character'],
    ['\u{10FFFF}', '\uF8FF', 1, 'the last astral character above the last private-use character'],
    ['\u{1F600}', '\uD7FF', 1, 'above the last character before the surrogates'],
    ['\u{1F600}', '\u{1F601}', -1, 'two astral characters by code point'],
    ['\uE000', '\uFFFF', -1, 'within the BMP as by code unit'],
    ['a', 'b', -1, 'ASCII'],
    ['B', 'a', -1, 'case-sensitive: upper case first'],
    ['abc', 'abc', 0, 'equal'],
    ['', '', 0, 'both empty'],
    ['', 'a', -1, 'empty first'],
    ['ab', 'abc', -1, 'a prefix sorts first'],
    ['abc', 'ab', 1, 'a longer string after its prefix'],
    ['x\u{1F600}', 'x\u{1F600}', 0, 'equal with an astral character'],
    ['x\u{1F600}', 'x\u{1F600}a', -1, 'equal prefix ending in a surrogate pair'],
    ['x\u{1F600}b', 'x\u{1F600}a', 1, 'the difference after an equal surrogate pair'],
    ['x\u{1F600}', 'x\uFFFFzzz', 1, 'an astral character after an equal prefix, against a longer BMP tail'],
    ['\u{1F600}', '\u{1F600}'.slice(0, 1), 1, 'a lone high surrogate is a prefix of its pair'],
  ]
  for (const [a, b, expected, label] of cases) {
    t.equal(compareCodePoints(a, b), expected, label)
    t.equal(compareCodePoints(b, a), expected === 0 ? 0 : -expected, `${label} (swapped)`)
    t.equal(byDefinition(a, b), expected, `${label}: the definition agrees`)
  }
  t.ok('\u{1F600}' < '\uFFFF', "JavaScript's < orders by code unit, which is why this module exists")
})

t.test('random strings agree with the definition', async (t) => {
  let seed = 7
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed / 2 ** 31
  }
  // Characters from where the orders meet: ASCII, just below the surrogates, private use, the BMP's end, astral.
  const pools = [
    [0x41, 0x43],
    [0xd7fe, 0xd7ff],
    [0xe000, 0xe001],
    [0xfffe, 0xffff],
    [0x10000, 0x10001],
    [0x1f600, 0x1f601],
    [0x10fffe, 0x10ffff],
  ]
  const randomString = () => {
    let out = ''
    const length = Math.floor(random() * 4)
    for (let index = 0; index < length; index += 1) {
      const [low, high] = pools[Math.floor(random() * pools.length)] as number[]
      out += String.fromCodePoint((low as number) + Math.floor(random() * ((high as number) - (low as number) + 1)))
    }
    return out
  }
  let disagreements = 0
  const samples: string[] = []
  for (let round = 0; round < 20_000; round += 1) {
    const a = randomString()
    const b = random() < 0.3 ? a + randomString() : randomString()
    if (compareCodePoints(a, b) !== byDefinition(a, b)) {
      disagreements += 1
      if (samples.length < 5) samples.push(JSON.stringify([a, b]))
    }
  }
  t.equal(disagreements, 0, `no disagreement ${samples.join(' ')}`)
  const words = Array.from({ length: 300 }, randomString)
  t.same([...words].sort(compareCodePoints), [...words].sort(byDefinition), 'sorting gives the same order')
})

t.test('$orderby compares strings by code point', async (t) => {
  t.ok(compareValues('\u{1F600}', '\uFFFF') > 0, 'an astral character sorts after U+FFFF')
  t.ok(compareValues('\uE000', '\u{10000}') < 0)
  t.equal(compareValues('a\u{1F600}', 'a\u{1F600}'), 0)
  t.ok(compareValues(null, '\u{1F600}') < 0, 'null first')
})
