/*
 * The sequence numbers a tenant's log holds, kept in memory as runs of
 * consecutive numbers ([from, to] each, in order), so that lastSeq,
 * firstSeq, logLength and hasEntry answer synchronously without the
 * entries. A log is one run, or a few: a restore or an import starts a new
 * line after a gap (a snapshot with no entry at its number). Appends
 * extend the last run; pruning cuts from the front; truncation from the
 * back. Loaded from PostgreSQL at prepare (gaps and islands over the
 * tenant's keys: one row per run).
 */
import { assert } from '../../assert.js'

export class LogRuns {
  private readonly from: number[] = []
  private readonly to: number[] = []
  /** Entries held. */
  count = 0

  static of(runs: readonly { from: number; to: number }[]): LogRuns {
    const log = new LogRuns()
    for (const run of runs) {
      log.from.push(run.from)
      log.to.push(run.to)
      log.count += run.to - run.from + 1
    }
    return log
  }

  get first(): number {
    return this.from[0] ?? 0
  }

  get last(): number {
    return this.to.at(-1) ?? 0
  }

  add(seq: number): void {
    const last = this.to.length - 1
    const lastTo = this.to[last]
    if (lastTo !== undefined && seq <= lastTo) return
    if (lastTo !== undefined && seq === lastTo + 1) this.to[last] = seq
    else {
      this.from.push(seq)
      this.to.push(seq)
    }
    this.count += 1
  }

  has(seq: number): boolean {
    for (let run = 0; run < this.from.length; run += 1) {
      const from = this.from[run]
      const to = this.to[run]
      assert(from !== undefined && to !== undefined, 'every run has both ends')
      if (seq >= from && seq <= to) return true
    }
    return false
  }

  /** Forgets every number up to and including `seq`. */
  removeUpTo(seq: number): void {
    for (;;) {
      const from = this.from[0]
      const to = this.to[0]
      if (from === undefined || to === undefined || from > seq) return
      const end = Math.min(to, seq)
      this.count -= end - from + 1
      if (end === to) {
        this.from.shift()
        this.to.shift()
      } else this.from[0] = end + 1
    }
  }

  /** Forgets every number after `seq`. */
  removeAfter(seq: number): void {
    for (;;) {
      const last = this.to.length - 1
      const from = this.from[last]
      const to = this.to[last]
      if (from === undefined || to === undefined || to <= seq) return
      const start = Math.max(from, seq + 1)
      this.count -= to - start + 1
      if (start === from) {
        this.from.pop()
        this.to.pop()
      } else this.to[last] = start - 1
    }
  }

  *seqs(): IterableIterator<number> {
    for (let run = 0; run < this.from.length; run += 1) {
      const from = this.from[run]
      const to = this.to[run]
      assert(from !== undefined && to !== undefined, 'every run has both ends')
      for (let seq = from; seq <= to; seq += 1) yield seq
    }
  }
}
