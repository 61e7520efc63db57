/*
 * A tenant's budget of heavy-read CPU time (ARCHITECTURE.md §2.4): its heavy reads —
 * scans, sorts, summaries and reports that need more than one slice
 * (slicedRead.ts) — may take TENANT_HEAVY_READ_MS_PER_S milliseconds of the
 * event loop per second.
 *
 * The time is measured around each slice (performance.now()) and kept as a
 * token bucket: the budget refills at msPerSecond per second, holds at most
 * one second's worth (a burst: one long read on a quiet tenant answers at
 * full speed), and a slice's time is taken from it even past empty (a debt).
 * While it is empty or in debt, the tenant's new heavy reads are refused
 * (429 TL01-9010 with Retry-After: until the debt is paid back); a heavy
 * read already running ends, and what it overspent is paid back before the
 * next. So over any long stretch the tenant's heavy reads take no more than
 * msPerSecond per second, however long each one is (a sliding window of one
 * second would forget a read longer than itself). Its light reads and its
 * writes never look at the budget. In memory per process, per tenant; never
 * logged (it is no tenant state; a restart forgets it). 0 turns it off.
 */
import { assertionFailed } from '../assert.js'

const SECOND_MS = 1000

export class HeavyReadBudget {
  /** Milliseconds left as of `updatedMs` (negative: a debt). */
  private leftMs: number
  private updatedMs = Number.NEGATIVE_INFINITY

  constructor(readonly msPerSecond: number) {
    this.leftMs = msPerSecond
  }

  get enabled(): boolean {
    return this.msPerSecond > 0
  }

  /** Milliseconds left at `nowMs` (negative: a debt). */
  leftAt(nowMs: number): number {
    if (nowMs > this.updatedMs) {
      const refill = this.updatedMs === Number.NEGATIVE_INFINITY ? this.msPerSecond : ((nowMs - this.updatedMs) * this.msPerSecond) / SECOND_MS
      this.leftMs = Math.min(this.msPerSecond, this.leftMs + refill)
      this.updatedMs = nowMs
      // The bucket holds at most a second's worth, and a number (a NaN would never refuse again).
      if (!(this.leftMs <= this.msPerSecond)) assertionFailed(`heavy-read budget: ${this.leftMs} ms left of ${this.msPerSecond}`)
    }
    return this.leftMs
  }

  /** Takes `ms` of heavy-read work done at `nowMs`. */
  spend(ms: number, nowMs: number): void {
    if (!this.enabled || !(ms > 0)) return
    this.leftMs = this.leftAt(nowMs) - ms
  }

  /** Whether the tenant's heavy reads are refused now. */
  exhausted(nowMs: number): boolean {
    return this.enabled && this.leftAt(nowMs) <= 0
  }

  /** `exhausted` at the present moment; without reading the clock while there is budget left (refills only add). */
  exhaustedNow(): boolean {
    return this.enabled && this.leftMs <= 0 && this.exhausted(performance.now())
  }

  /** How long until the budget has room again (0: it has now). */
  msUntilRoom(nowMs: number): number {
    if (!this.exhausted(nowMs)) return 0
    return Math.max(1, Math.ceil(((-this.leftAt(nowMs) + 1) * SECOND_MS) / this.msPerSecond))
  }
}
