/*
 * One budget of bytes for all change feed streams of this node together
 * (CHANGE_FEED_MAX_BUFFERED_BYTES_PER_NODE): WebSocket and Server-Sent
 * Events alike, feeds forwarded to another node included. What a stream
 * holds is what waits for its client on the server: the events in its
 * queue and what uWS holds of them for the socket. Each stream tells the
 * budget what it holds whenever that changes (`holds`: after a send, after
 * its client took some); once the sum passes the budget, the streams
 * holding the most are cut first (ended with 4409, too slow: the client
 * resumes with `since`) until the sum is within the budget again. So the
 * slowest clients go first, and a node with many slow clients stays within
 * the budget while each of them is still far under its own limit
 * (CHANGE_FEED_MAX_BUFFERED_BYTES, which the subscription checks itself).
 *
 * The cut comes at the end of the event-loop turn that went past the
 * budget (a microtask), once however many streams grew in that turn (a
 * write's events go to every subscriber in one turn); it first reads what
 * each stream holds now, since a socket may have taken some without
 * telling yet. A stream holding nothing is not tracked at all, so idle
 * streams cost the budget nothing. A budget of 0 cuts nothing.
 */
/** A stream the budget tracks. */
export interface BudgetedStream {
  /** Bytes it holds for its client now. */
  bufferedBytes(): number
  /** Ends it as too slow (the budget's cut); it then tells the budget it is `gone`. */
  cut(): void
}

export class FeedBudget {
  /** What each stream holding anything held when it last told. */
  private readonly held = new Map<BudgetedStream, number>()
  private total = 0
  private cutScheduled = false
  /** Streams cut since start (/metrics). */
  cuts = 0

  constructor(readonly maxBytes: number) {}

  /** Bytes all streams held when they last told. */
  get heldBytes(): number {
    return this.total
  }

  /** A stream holds `bytes` now. */
  holds(stream: BudgetedStream, bytes: number): void {
    const before = this.held.get(stream) ?? 0
    if (bytes > 0) this.held.set(stream, bytes)
    else this.held.delete(stream)
    this.total += bytes - before
    if (this.maxBytes > 0 && this.total > this.maxBytes && !this.cutScheduled) {
      this.cutScheduled = true
      queueMicrotask(() => this.cutTheSlowest())
    }
  }

  /** The stream ended: what it held no longer counts. */
  gone(stream: BudgetedStream): void {
    const before = this.held.get(stream)
    if (before === undefined) return
    this.held.delete(stream)
    this.total -= before
  }

  private cutTheSlowest(): void {
    this.cutScheduled = false
    this.total = 0
    for (const stream of [...this.held.keys()]) {
      const bytes = stream.bufferedBytes()
      if (bytes > 0) this.held.set(stream, bytes)
      else this.held.delete(stream)
      this.total += bytes
    }
    if (this.total <= this.maxBytes) return
    const slowestFirst = [...this.held].sort(([, a], [, b]) => b - a)
    for (const [stream] of slowestFirst) {
      if (this.total <= this.maxBytes) return
      this.cuts += 1
      stream.cut()
      this.gone(stream)
    }
  }
}
