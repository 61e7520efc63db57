/*
 * A tenant's budget of heavy-read CPU time (design §2.4): the milliseconds
 * its heavy reads — scans, sorts, summaries and reports that need more
 * than one slice (slicedRead.ts) — spent on the event loop in the last
 * second, against TENANT_HEAVY_READ_MS_PER_S.
 *
 * The time is measured around each slice (performance.now()) and added to
 * the bucket of the current tenth of a second; the last BUCKETS buckets
 * make the sliding window of one second. While the window holds the budget
 * or more, the tenant's new heavy reads are refused (429 TL01-9010 with
 * Retry-After) and a heavy read already running waits before its next
 * slice until the window has room again; its light reads and its writes
 * never look at the budget. In memory per process, per tenant; never logged
 * (it is no tenant state, and a restart forgets it). A budget of 0 is off.
 */

const WINDOW_MS = 1000
const BUCKETS = 10
const BUCKET_MS = WINDOW_MS / BUCKETS

export class HeavyReadBudget {
  /** Milliseconds spent per bucket; `starts` holds the start (ms) of the tenth each bucket counts. */
  private readonly spent = new Float64Array(BUCKETS)
  private readonly starts = new Float64Array(BUCKETS).fill(Number.NEGATIVE_INFINITY)

  constructor(readonly msPerSecond: number) {}

  get enabled(): boolean {
    return this.msPerSecond > 0
  }

  /** Counts `ms` of heavy-read work done at `nowMs`. */
  spend(ms: number, nowMs: number): void {
    if (!this.enabled || !(ms > 0)) return
    const start = Math.floor(nowMs / BUCKET_MS) * BUCKET_MS
    const slot = Math.floor(start / BUCKET_MS) % BUCKETS
    if (this.starts[slot] !== start) {
      this.starts[slot] = start
      this.spent[slot] = 0
    }
    this.spent[slot] = (this.spent[slot] as number) + ms
  }

  /** Heavy-read milliseconds spent in the second up to `nowMs`. */
  usedMs(nowMs: number): number {
    let used = 0
    const oldest = nowMs - WINDOW_MS
    for (let slot = 0; slot < BUCKETS; slot += 1) if ((this.starts[slot] as number) > oldest) used += this.spent[slot] as number
    return used
  }

  /** Whether the tenant has spent its budget of the last second. */
  exhausted(nowMs: number): boolean {
    return this.enabled && this.usedMs(nowMs) >= this.msPerSecond
  }

  /** How long until the window holds less than the budget again (0: it does now). */
  msUntilRoom(nowMs: number): number {
    if (!this.exhausted(nowMs)) return 0
    // Buckets leave the window oldest first; find when enough of them are gone.
    const live: [number, number][] = []
    for (let slot = 0; slot < BUCKETS; slot += 1) {
      const start = this.starts[slot] as number
      if (start > nowMs - WINDOW_MS) live.push([start, this.spent[slot] as number])
    }
    live.sort((a, b) => a[0] - b[0])
    let used = this.usedMs(nowMs)
    for (const [start, ms] of live) {
      used -= ms
      if (used < this.msPerSecond) return Math.max(1, start + WINDOW_MS - nowMs)
    }
    return WINDOW_MS
  }
}
