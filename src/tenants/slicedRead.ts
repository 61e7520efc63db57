/*
 * A read that may be long — a scan, a sort, a summary, a report over a
 * million records — written as steps (engine/steps.ts: the query pauses after
 * every few hundred records it visits) and run in slices, so that one
 * tenant's long read never holds the event loop for more than a slice
 * (READ_SLICE_MS) while the other tenants wait (ARCHITECTURE.md §2.4).
 *
 * The first slice runs at once, inside the request's handler. A read that
 * ends in it — a read by id, an index lookup of a few records, a page read
 * through an index — is *light*: it answers at once, as any read does
 * (maybePromise.ts), and costs the budget nothing. A read that needs more
 * is *heavy*: the rest runs one slice per event-loop turn, and the time of
 * every slice, the first one included, is spent from the tenant's heavy-read
 * budget (heavyReadBudget.ts). While that budget is used up, a read gets
 * one step only (a few hundred records) as its first slice: if it does not
 * end there it is refused with 429 TL01-9010 and Retry-After, before it
 * costs more. A heavy read that started within the budget runs to its end
 * (pausing it would keep its tenant held, and the tenant's light reads and
 * writes waiting); what it overspends is paid back before the next.
 *
 * Consistency is the caller's part: the state must not change between
 * slices. The tenant actor holds the tenant exclusively from the end of the
 * first slice to the last (its writes wait: a tenant's heavy read stalls
 * only that tenant); a batch holds its tenant anyway.
 */
import { assertionFailed } from '../assert.js'
import { ApiError } from '../domain/errors.js'
import type { HeavyReadBudget } from './heavyReadBudget.js'
import type { Steps } from '../engine/steps.js'

export class SlicedRead<T> {
  private result: { value: T } | null = null
  /** Time of the slices run so far, not yet spent from the budget (a read is not known heavy until its first slice ends). */
  private unspentMs = 0

  constructor(
    private readonly steps: Steps<T>,
    private readonly budget: HeavyReadBudget,
    private readonly sliceMs: number,
  ) {}

  /** The answer, once `first` or `rest` gave it. */
  get value(): T {
    if (this.result === null) assertionFailed('a sliced read has no answer yet')
    return this.result.value
  }

  /**
   * Runs the first slice: true when the read ended in it (light: `value`
   * holds the answer, nothing is spent); false when it needs more (heavy:
   * its time is spent, and `rest` runs the remainder). Throws 429 when the
   * budget is used up and the read does not end in a single step.
   */
  first(): boolean {
    const exhausted = this.budget.exhaustedNow()
    if (this.slice(exhausted ? 0 : this.sliceMs, null)) return true
    const now = performance.now()
    this.budget.spend(this.unspentMs, now)
    this.unspentMs = 0
    if (exhausted) {
      this.steps.return(undefined as T)
      throw budgetSpent(this.budget, now)
    }
    return false
  }

  /** Runs the slices after the first, one per event-loop turn; resolves with the answer. */
  async rest(): Promise<T> {
    for (;;) {
      await nextTurn()
      const done = this.slice(this.sliceMs, performance.now())
      this.budget.spend(this.unspentMs, performance.now())
      this.unspentMs = 0
      if (done) return this.value
    }
  }

  /**
   * Steps until the read ends (true) or `allowanceMs` passed (false; at least one step always runs). With `began`
   * null the clock starts at the first pause: a light read never reads it, and a first slice is short by one step
   * (a few hundred records) at most.
   */
  private slice(allowanceMs: number, began: number | null): boolean {
    let started = began
    for (;;) {
      const next = this.steps.next()
      if (next.done === true) {
        this.result = { value: next.value }
        if (started !== null) this.unspentMs += performance.now() - started
        return true
      }
      const now = performance.now()
      started ??= now
      if (now - started >= allowanceMs) {
        this.unspentMs += now - started
        return false
      }
    }
  }
}

function budgetSpent(budget: HeavyReadBudget, nowMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(budget.msUntilRoom(nowMs) / 1000))
  return new ApiError('TL01-9010', `this tenant's long reads (scans, sorts, summaries, reports) used their ${budget.msPerSecond} ms of CPU per second; retry in ${seconds} s`, null, [], {
    'Retry-After': String(seconds),
  })
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
