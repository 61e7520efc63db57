/*
 * A Prometheus histogram kept as plain numbers: one count per bucket (not
 * cumulative; the exposition cumulates), the sum and the count. Observing
 * is a short scan over the bucket bounds and three additions, with no
 * allocation.
 */
import { assertionFailed } from '../assert.js'

/** Latency buckets in seconds, 0.1 ms to 10 s. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]

export class Histogram {
  /** counts[i] counts observations ≤ bounds[i] and > bounds[i - 1]; the last slot is above every bound. */
  readonly counts: Float64Array
  sum = 0
  count = 0

  constructor(readonly bounds: readonly number[]) {
    for (let index = 1; index < bounds.length; index += 1) {
      if (!((bounds[index] as number) > (bounds[index - 1] as number))) assertionFailed('histogram bounds must increase')
    }
    this.counts = new Float64Array(bounds.length + 1)
  }

  observe(value: number): void {
    const { bounds } = this
    let index = 0
    while (index < bounds.length && value > (bounds[index] as number)) index += 1
    this.counts[index] = (this.counts[index] as number) + 1
    this.sum += value
    this.count += 1
  }
}
