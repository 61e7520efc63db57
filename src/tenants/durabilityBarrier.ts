/*
 * The durability barrier of one tenant (ARCHITECTURE.md §2.2, §2.3): which of the
 * entries applied to its state are on disk. Each entry is appended to the
 * tenant log with the next sequence number; the append resolves once the
 * group commit holding it is flushed. Commits are flushed in order, so the
 * flush of the newest append covers every earlier one: waiting until `seq`
 * is durable is waiting for that newest flush, then comparing.
 *
 * Once an append fails, nothing from that entry on is acknowledged
 * (`failedFromSeq`): its own caller and every later one get
 * WritesUnavailable, and the tenant is told once (`onFailed`) so that it
 * reloads what is on disk (reloadAfterFailure.ts) and resets the barrier.
 *
 * The callbacks are given once, at construction: an append allocates no
 * more than the promise chain of the log's own append.
 */
import type { LogEntry } from '../engine/logEntry.js'
import type { TenantLog } from '../persist/ports.js'
import { WritesUnavailable } from './tenantErrors.js'

export class DurabilityBarrier {
  /** Highest sequence number known to be on disk. */
  durableSeq: number
  /** The flush of the newest appended entry (it covers every earlier one). */
  private lastFlush: Promise<void> = Promise.resolve()
  /** Set when an append failed: entries from this sequence on are not durable. */
  private failedFromSeq: number | null = null

  constructor(
    private readonly log: TenantLog,
    private readonly tenant: string,
    seq: number,
    /** Hears the size of each entry that became durable. */
    private readonly onLogged: (bytes: number) => void,
    /** Hears the first failed append (the sequence number from which nothing is durable). */
    private readonly onFailed: (seq: number, error: unknown) => void,
    /** Hears each entry that became durable (the change feed). */
    private readonly onDurable: (seq: number, entry: LogEntry) => void,
  ) {
    this.durableSeq = seq
  }

  /** Appends the entry at `seq`; resolves once it is durable, rejects with WritesUnavailable when it cannot be. */
  append(seq: number, entry: LogEntry): Promise<void> {
    const flush = this.log.append(this.tenant, seq, entry).then(
      (bytes) => {
        if (this.failedFromSeq !== null && seq >= this.failedFromSeq) throw new WritesUnavailable()
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
    if (this.failedFromSeq !== null || seq > this.durableSeq) throw new WritesUnavailable()
  }

  /** Writes are refused from a failed append until the tenant has reloaded (reset). */
  refuseWhileFailed(): void {
    if (this.failedFromSeq !== null) throw new WritesUnavailable()
  }

  /** The state in memory is what the log holds up to `seq` (reloaded, or replaced by a restore). */
  reset(seq: number): void {
    this.durableSeq = seq
    this.failedFromSeq = null
  }

  private fail(seq: number, error: unknown): void {
    if (this.failedFromSeq !== null && this.failedFromSeq <= seq) return
    this.failedFromSeq = seq
    this.onFailed(seq, error)
  }
}
