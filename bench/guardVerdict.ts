/*
 * The guard's statistic and decision (guard.ts, `npm run bench:guard`).
 *
 * Each round measures a scenario on both builds back to back, so the two
 * figures of a round share the machine's moment: the ratio of a round (this
 * build's server CPU per request over the ref's) cancels what the machine's
 * speed does over seconds and minutes (on the shared VM it moves by up to
 * twice). What is left varies from round to round, about as much for
 * half-second rounds as for whole seconds (measured: the speed also moves
 * within a second), and now and then a round is wild (a neighbour's burst
 * lands on one half of it). Hence many short rounds, and a statistic that is
 * efficient on such noise and that a few wild rounds cannot move:
 *
 *   - the figure is the Hodges–Lehmann estimate of the rounds' log ratios
 *     (the median of the means of all their pairs, the Walsh averages),
 *     turned back into a ratio;
 *   - its spread is the confidence interval that goes with it, from the
 *     Wilcoxon signed-rank distribution: the Walsh averages number c and
 *     M + 1 − c in order (M = n(n+1)/2), with the largest c whose coverage
 *     1 − 2·P(T < c) is at least CONFIDENCE (T: the signed-rank statistic of
 *     n rounds, exact).
 *
 * It assumes only that the rounds are independent and that a round's log
 * ratio is as likely above the true one as below by the same amount (the
 * order of the two builds alternates, so neither going first tilts it); not
 * that the noise is normal. On normal noise it is 95 % as efficient as the
 * mean, where the plain median of the rounds is 64 %; up to 29 % of wild
 * rounds do not carry it away. With fewer than 5 rounds no interval reaches
 * 90 %: it is then the rounds' min–max, and the coverage shown is lower.
 *
 * A scenario FAILS when this build is more than SLOWER_LIMIT slower beyond
 * that spread: the interval's lower end is above 1 + SLOWER_LIMIT. Noise
 * moves rounds both ways and cannot push the whole interval past 1.10 but
 * by the small chance its coverage leaves (at most 5 % per scenario, far
 * less when the estimate itself is near 1); a real regression moves every
 * round. When the spread is wider than the noise allows to tell a 10 %
 * regression from none, the verdict says so (`unclear`): the run passes,
 * but the output shows that it could not have seen such a regression.
 */

/** "More than 10 % slower" (issue 39). */
export const SLOWER_LIMIT = 0.1
/** The least coverage asked of the spread, when there are rounds enough for it. */
export const CONFIDENCE = 0.9

export interface RatioSummary {
  /** Hodges–Lehmann estimate of the ratio this build / the ref. */
  ratio: number
  /** The spread: the confidence interval of `ratio`. */
  low: number
  high: number
  /** Its coverage, 0–1. */
  coverage: number
  rounds: number
}

export type Verdict = 'ok' | 'unclear' | 'slower'

/**
 * P(T ≤ t) for t = 0 … n(n+1)/2, T the Wilcoxon signed-rank statistic of n
 * observations under the null: the number of subsets of {1 … n} with each
 * sum, over 2^n, cumulated.
 */
export function signedRankCdf(n: number): number[] {
  const total = (n * (n + 1)) / 2
  let counts = new Float64Array(total + 1)
  counts[0] = 1
  for (let rank = 1; rank <= n; rank += 1) {
    const next = Float64Array.from(counts)
    for (let sum = rank; sum <= total; sum += 1) next[sum] = (next[sum] as number) + (counts[sum - rank] as number)
    counts = next
  }
  const cdf: number[] = []
  let running = 0
  for (const count of counts) {
    running += count / 2 ** n
    cdf.push(running)
  }
  return cdf
}

/** The Hodges–Lehmann estimate of the per-round `ratios` with its signed-rank confidence interval (see above). */
export function summarizeRatios(ratios: readonly number[], confidence = CONFIDENCE): RatioSummary {
  if (ratios.length === 0) throw new Error('no rounds to summarize')
  for (const ratio of ratios) if (!(ratio > 0 && Number.isFinite(ratio))) throw new Error(`a ratio must be positive and finite, got ${ratio}`)
  const logs = ratios.map(Math.log)
  const n = logs.length
  const walsh: number[] = []
  for (let i = 0; i < n; i += 1) for (let j = i; j < n; j += 1) walsh.push(((logs[i] as number) + (logs[j] as number)) / 2)
  walsh.sort((a, b) => a - b)
  const m = walsh.length
  const middle = m >> 1
  const estimate = m % 2 === 1 ? (walsh[middle] as number) : ((walsh[middle - 1] as number) + (walsh[middle] as number)) / 2
  // c = 1 is [min, max] (coverage 1 − 2/2^n); widen c while the coverage of the next stays at least `confidence`.
  const cdf = signedRankCdf(n)
  let c = 1
  while (c + 1 <= m + 1 - (c + 1) && 1 - 2 * (cdf[c] as number) >= confidence) c += 1
  return {
    ratio: Math.exp(estimate),
    low: Math.exp(walsh[c - 1] as number),
    high: Math.exp(walsh[m - c] as number),
    coverage: 1 - 2 * (cdf[c - 1] as number),
    rounds: n,
  }
}

/**
 * `slower` (the guard fails): more than SLOWER_LIMIT slower beyond the spread. `ok`: the spread ends at or below
 * 1 + SLOWER_LIMIT, so a regression of more than that is ruled out. `unclear`: neither; the spread is too wide.
 */
export function verdictOf(summary: RatioSummary, limit = SLOWER_LIMIT): Verdict {
  if (summary.low > 1 + limit) return 'slower'
  return summary.high <= 1 + limit ? 'ok' : 'unclear'
}
