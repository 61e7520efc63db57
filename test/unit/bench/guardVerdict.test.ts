/*
 * The guard's statistic and decision (bench/guardVerdict.ts): the
 * Hodges–Lehmann estimate of the rounds' ratios, its signed-rank confidence
 * interval (the spread), and the verdict: SLOWER only when the whole spread
 * is above 1.10. Checked on hand-made rounds and, with a seeded PRNG, on
 * many simulated runs: noise alone never fails the guard, a real 25 %
 * regression does, and a few wild rounds move nothing.
 */
import t from 'tap'
import { seededRandom } from '../../../bench/dataset.js'
import { signedRankCdf, summarizeRatios, verdictOf } from '../../../bench/guardVerdict.js'

/** A standard normal draw (Box–Muller) from a seeded uniform source. */
function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
}

/** `n` rounds' ratios: the true ratio times log-normal noise of `sigma`. */
function rounds(random: () => number, n: number, trueRatio: number, sigma: number): number[] {
  return Array.from({ length: n }, () => trueRatio * Math.exp(sigma * normal(random)))
}

t.test('the signed-rank distribution', async (t) => {
  const five = signedRankCdf(5)
  t.equal(five.length, 16, 'T runs from 0 to n(n+1)/2')
  t.equal(five[0], 1 / 32, 'only the empty subset sums to 0')
  t.equal(five[1], 2 / 32)
  t.equal(five[3], 5 / 32, '{}, {1}, {2}, {3}, {1,2}')
  t.equal(five[15], 1)
  // The textbook critical value: for n = 10, P(T ≤ 8) = 25/1024 and P(T ≤ 10) = 43/1024.
  const ten = signedRankCdf(10)
  t.ok(Math.abs((ten[8] as number) - 25 / 1024) < 1e-12, `P(T ≤ 8) = ${ten[8]}`)
  t.ok(Math.abs((ten[10] as number) - 43 / 1024) < 1e-12, `P(T ≤ 10) = ${ten[10]}`)
})

t.test('the estimate and its spread', async (t) => {
  const same = summarizeRatios([1.2, 1.2, 1.2, 1.2, 1.2])
  t.ok(Math.abs(same.ratio - 1.2) < 1e-12 && Math.abs(same.low - 1.2) < 1e-12 && Math.abs(same.high - 1.2) < 1e-12, 'rounds that agree')

  const five = summarizeRatios([0.9, 1.3, 1.0, 1.1, 1.2])
  t.ok(Math.abs(five.low - 0.9) < 1e-12 && Math.abs(five.high - 1.3) < 1e-12, 'with 5 rounds the spread is their min–max')
  t.equal(five.coverage, 1 - 2 / 32, '… which covers 93.75 %')
  t.equal(five.rounds, 5)

  const three = summarizeRatios([0.95, 1.05, 1.0])
  t.ok(Math.abs(three.low - 0.95) < 1e-12 && Math.abs(three.high - 1.05) < 1e-12, 'fewer than 5 rounds: the min–max …')
  t.equal(three.coverage, 0.75, '… with the lower coverage it has, shown')

  const twelve = summarizeRatios([0.8, 0.9, 0.95, 0.97, 1.0, 1.0, 1.02, 1.03, 1.05, 1.1, 1.2, 1.4])
  t.ok(twelve.low > 0.8 && twelve.high < 1.4, 'with more rounds the extremes fall out of the spread')
  t.ok(twelve.coverage >= 0.9, `coverage ${twelve.coverage}`)
  t.ok(twelve.low <= twelve.ratio && twelve.ratio <= twelve.high)

  const symmetric = summarizeRatios([1 / 1.2, 1 / 1.1, 1, 1.1, 1.2])
  t.ok(Math.abs(symmetric.ratio - 1) < 1e-12, 'ratios symmetric around 1 in the logarithm give 1')

  for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) t.throws(() => summarizeRatios([1, bad]), /positive and finite/, `refuses ${bad}`)
  t.throws(() => summarizeRatios([]), /no rounds/)
})

t.test('the verdict', async (t) => {
  t.equal(verdictOf(summarizeRatios([1.2, 1.25, 1.3, 1.22, 1.28])), 'slower', 'every round more than 10 % slower')
  t.equal(verdictOf(summarizeRatios([0.98, 1.0, 1.02, 1.01, 0.99])), 'ok', 'a spread at or below 1.10')
  t.equal(verdictOf(summarizeRatios([0.8, 1.3, 1.0, 1.25, 0.9])), 'unclear', 'a spread across 1.10: not ruled out, not shown')
  t.equal(verdictOf(summarizeRatios([1.05, 1.3, 1.2, 1.25, 1.15])), 'unclear', 'one round at +5 % keeps a five-round spread below 1.10')
  t.equal(verdictOf({ ratio: 1.2, low: 1.1, high: 1.3, coverage: 0.9, rounds: 8 }), 'unclear', 'a lower end of exactly 1.10 is not "more than 10 %"')
  t.equal(verdictOf({ ratio: 1.0, low: 0.9, high: 1.1, coverage: 0.9, rounds: 8 }), 'ok', 'an upper end of exactly 1.10 rules out more than 10 %')
  t.equal(verdictOf({ ratio: 1.0, low: 1.04, high: 1.08, coverage: 0.9, rounds: 8 }, 0.03), 'slower', 'the limit is a parameter')
})

t.test('noise does not fail the guard; a real regression does', async (t) => {
  const random = seededRandom(39)
  const runs = 2000
  const count = (trueRatio: number, sigma: number, n: number) => {
    let slower = 0
    for (let run = 0; run < runs; run += 1) if (verdictOf(summarizeRatios(rounds(random, n, trueRatio, sigma))) === 'slower') slower += 1
    return slower / runs
  }
  // Noise of 10 % per round (a busy machine), 8 rounds: the build is as fast as the ref, or 5 % slower.
  t.equal(count(1.0, 0.1, 8), 0, 'no change: never fails')
  t.ok(count(1.05, 0.1, 8) < 0.01, '5 % slower: fails (almost) never')
  // A real regression of 25 % (a busy loop in a GET) fails nearly always at that noise, always at 5 %.
  t.ok(count(1.25, 0.1, 8) > 0.7, `25 % slower, 10 % noise: fails in ${count(1.25, 0.1, 8) * 100} % of runs`)
  t.equal(count(1.25, 0.05, 8), 1, '25 % slower, 5 % noise: fails every time')
  t.ok(count(1.2, 0.03, 8) > 0.99, '20 % slower on a quiet machine (3 % noise): fails')
})

t.test('a wild round does not carry the verdict', async (t) => {
  const steady = [1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.02, 0.98]
  const wild = summarizeRatios([...steady.slice(0, 9), 5])
  t.equal(verdictOf(wild), 'ok', `one round at 5× among ten: ${wild.ratio.toFixed(3)} (${wild.low.toFixed(3)}–${wild.high.toFixed(3)})`)
  const regression = [1.21, 1.19, 1.22, 1.18, 1.2, 1.21, 1.19, 1.2, 1.22, 1.18]
  t.equal(verdictOf(summarizeRatios([...regression.slice(0, 9), 0.3])), 'slower', 'nor does one at 0.3× hide a 20 % regression')
  // Two wild rounds on the same side widen that side of the spread, but the estimate stays.
  const twoWild = summarizeRatios([...steady.slice(0, 8), 5, 4])
  t.ok(Math.abs(twoWild.ratio - 1) < 0.01, `two rounds at 4× and 5× among ten: estimate ${twoWild.ratio.toFixed(3)}`)
})
