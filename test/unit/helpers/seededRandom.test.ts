/*
 * The seeded generator of the fault test (test/helpers/seededRandom.ts): a
 * seed deals the same numbers again, another seed others; derived
 * generators depend on the seed and their label only; numbers stay in
 * their ranges; a seed that is not one is refused with its name.
 */
import t from 'tap'
import { MAX_SEED, parseSeed, seededRandom } from '../../helpers/seededRandom.js'

const draws = (seed: number, count = 20) => Array.from({ length: count }, seededRandom(seed).next)

t.test('the same seed deals the same numbers, another seed others', async (t) => {
  t.same(draws(42), draws(42))
  t.not(JSON.stringify(draws(42)), JSON.stringify(draws(43)))
  t.not(JSON.stringify(draws(0)), JSON.stringify(draws(MAX_SEED)))
})

t.test('numbers in [0, 1), integers in their bounds, every item picked, shuffles a permutation', async (t) => {
  const random = seededRandom(7)
  const numbers = Array.from({ length: 10_000 }, random.next)
  t.ok(
    numbers.every((value) => value >= 0 && value < 1),
    'in [0, 1)',
  )
  const mean = numbers.reduce((sum, value) => sum + value, 0) / numbers.length
  t.ok(mean > 0.47 && mean < 0.53, `spread over the range (mean ${mean.toFixed(3)})`)
  const dice = Array.from({ length: 6_000 }, () => random.between(1, 6))
  t.same([...new Set(dice)].sort(), [1, 2, 3, 4, 5, 6], 'between(1, 6) gives each of 1 … 6 and nothing else')
  t.same(new Set(Array.from({ length: 200 }, () => random.pick(['a', 'b', 'c']))), new Set(['a', 'b', 'c']))
  const shuffled = random.shuffled([1, 2, 3, 4, 5, 6, 7, 8])
  t.same([...shuffled].sort(), [1, 2, 3, 4, 5, 6, 7, 8], 'a shuffle keeps every item')
  t.throws(() => random.pick([]), /no items/)
})

t.test('a derived generator depends on the seed and its label, not on what the parent drew', async (t) => {
  const first = seededRandom(99)
  const second = seededRandom(99)
  second.next()
  second.next()
  const a = first.derive('worker 1')
  const b = second.derive('worker 1')
  t.same(Array.from({ length: 10 }, a.next), Array.from({ length: 10 }, b.next))
  t.not(JSON.stringify(Array.from({ length: 10 }, seededRandom(99).derive('worker 2').next)), JSON.stringify(Array.from({ length: 10 }, seededRandom(99).derive('worker 1').next)))
  t.not(JSON.stringify(Array.from({ length: 10 }, seededRandom(98).derive('worker 1').next)), JSON.stringify(Array.from({ length: 10 }, seededRandom(99).derive('worker 1').next)))
})

t.test('parseSeed takes a decimal 32-bit unsigned integer and refuses anything else, naming it', async (t) => {
  t.equal(parseSeed('0', 'NEMESIS_SEED'), 0)
  t.equal(parseSeed(String(MAX_SEED), 'NEMESIS_SEED'), MAX_SEED)
  for (const bad of ['', '-1', '1.5', 'abc', '0x10', String(MAX_SEED + 1), '12345678901']) t.throws(() => parseSeed(bad, 'NEMESIS_SEED'), /NEMESIS_SEED must be an integer/, `'${bad}' refused`)
})
