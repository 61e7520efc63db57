/*
 * The durability barrier of one tenant (ARCHITECTURE.md §2.2, §2.3): which of the
 * entries applied to its state are on disk. Each entry is appended to the
 * tenant log with the next sequence number; the append resolves once the
 * group commit holding it is flushed. Commits are flushed in order, so the
 * flush of the newest append covers every earlier one: waiting until `seq`
 * is durable is waiting for that newest flush, then comparing.
 *
 * Once an append fails, nothing from that entry on is acknowledged: its own
 * caller and every later one get WritesUnavailable. The tenant is told
 * (`onFailed`, again only for a failure of an earlier entry) and keeps the
 * sequence number in its phase (tenantActor.ts: 'failed', or 'released' in
 * cluster mode), which the barrier asks (`failedFrom`) until the tenant has
 * reloaded what is on disk (reloadAfterFailure.ts) and reset the barrier.
 *
 * The callbacks are given once, at construction: an append allocates no
 * more than the promise chain of the log's own append.
 */
import type { LogEntry } from '../engine/logEntry.js'
import { assert, assertionFailed } from '../assert.js'
import type { TenantLog } from '../persist/ports.js'
import { WritesUnavailable } from './tenantErrors.js'

export class DurabilityBarrier {
  /** Highest sequence number known to be on disk. */
  durableSeq: number
  /** The flush of the newest appended entry (it covers every earlier one). */
  private lastFlush: Promise<void> = Promise.resolve()

  constructor(
    private readonly log: TenantLog,
    private readonly tenant: string,
    seq: number,
    /** Hears the size of each entry that became durable. */
    private readonly onLogged: (bytes: number) => void,
    /** Hears a failed append (the sequence number from which nothing is durable), unless one before it failed already. */
    private readonly onFailed: (seq: number, error: unknown) => void,
    /** The sequence number from which nothing is acknowledged since an append failed; null while none did. */
    private readonly failedFrom: () => number | null,
    /** Hears each entry that became durable (the change feed). */
    private readonly onDurable: (seq: number, entry: LogEntry) => void,
  ) {
    this.durableSeq = seq
  }

  /** Appends the entry at `seq`; resolves once it is durable, rejects with WritesUnavailable when it cannot be. */
  append(seq: number, entry: LogEntry): Promise<void> {
    // The state holds every durable entry, so the next one it logs lies beyond them.
    if (seq <= this.durableSeq) assertionFailed(`tenant '${this.tenant}': entry ${seq} appended, ${this.durableSeq} is durable already`)
    const flush = this.log.append(this.tenant, seq, entry).then(
      (bytes) => {
        const failedFrom = this.failedFrom()
        if (failedFrom !== null && seq >= failedFrom) throw new WritesUnavailable()
        if (seq > this.durableSeq) this.durableSeq = seq
        this.onLogged(bytes)
        this.onDurable(seq, entry)
      },
      (error: unknown) => {
        this.fail(seq, error)
        throw new WritesUnavailable()
      },
    )
    this.lastFlush = flush.catch(() => undefined)
    return flush
  }

  /** Resolves once every entry up to `seq` is on disk. */
  async durable(seq: number): Promise<void> {
    if (seq <= this.durableSeq) return
    await this.lastFlush
    if (this.failedFrom() !== null || seq > this.durableSeq) throw new WritesUnavailable()
  }

  /** The state in memory is what the log holds up to `seq` (reloaded, or replaced by a restore). */
  reset(seq: number): void {
    assert(this.failedFrom() === null, 'the barrier is reset while the tenant still counts a failed append')
    // What was durable stays so: a reload holds every entry the log acknowledged, a restore lies above them all.
    if (seq < this.durableSeq) assertionFailed(`tenant '${this.tenant}': the durable sequence number would go back from ${this.durableSeq} to ${seq}`)
    this.durableSeq = seq
  }

  private fail(seq: number, error: unknown): void {
    const failedFrom = this.failedFrom()
    if (failedFrom !== null && failedFrom <= seq) return
    this.onFailed(seq, error)
    assert(this.failedFrom() === seq, 'a failed append is not counted by the tenant')
  }
}
