/*
 * The change feed as Server-Sent Events (text/event-stream): a FeedOutlet
 * whose events wait in a queue (byteQueue.ts) that the HTTP listener drains
 * at the client's pace (a StreamedBody: streamedAnswer.ts pulls the next
 * chunk only once the socket took the last one), so `bufferedBytes` is
 * what the client has not taken yet; the node's budget (feedBudget.ts)
 * counts it with every other stream's. Each event is
 *
 *   id: <seq>.<op>
 *   event: change
 *   data: <the event's JSON>
 *
 * its bytes made once for all the streams it goes to (the same message
 * object reaches each of them). The listener takes what is queued as one
 * chunk (up to MAX_CHUNK_BYTES), which it writes in one `res.cork`: the
 * events of a group commit, handed out in one round
 * (tenants/changeFeed.ts), cost the stream one system call, each still an
 * event of its own. The cap keeps what uWS holds for a slow client after
 * one write as small as the socket layer of a WebSocket stream holds. An EventSource sends the last id back as
 * Last-Event-ID when it reconnects, which resumes the feed. A comment line
 * every KEEP_ALIVE_MS keeps proxies from closing a quiet stream. The
 * stream's end is an `event: end` whose data says the close code and
 * reason of the WebSocket feed (feedOutlet.ts FEED_CLOSE), sent at once:
 * what still waited is dropped (the client resumes after the last event it
 * got); then the answer ends. A client that goes away ends the stream at
 * once, even while it waits quietly for the next event (the body's
 * `clientGone`): its subscription and its place end with it.
 */
import { StreamedBody } from '../streamedBody.js'
import { ByteQueue } from './byteQueue.js'
import type { BudgetedStream, FeedBudget } from './feedBudget.js'
import { FEED_CLOSE, type FeedClose, type FeedMessage, type FeedOutlet } from './feedOutlet.js'

const KEEP_ALIVE_MS = 25_000
/** The most bytes of queued events written as one chunk (see the top). */
const MAX_CHUNK_BYTES = 64 * 1024

const KEEP_ALIVE = Buffer.from(': keep-alive\n\n')

/** Each message's bytes as an event of the stream, made once however many streams it goes to. */
const messageBytes = new WeakMap<FeedMessage, Buffer>()

function bytesOf(message: FeedMessage): Buffer {
  let bytes = messageBytes.get(message)
  if (bytes === undefined) {
    const id = message.change === undefined ? '' : `id: ${message.change.seq}.${message.change.op}\n`
    bytes = Buffer.from(`${id}event: change\ndata: ${message.json}\n\n`)
    messageBytes.set(message, bytes)
  }
  return bytes
}

export class EventStreamOutlet implements FeedOutlet, BudgetedStream {
  private readonly queue = new ByteQueue()
  private ended = false
  /** The listener waiting for the next chunk. */
  private wake: (() => void) | null = null
  /** Resumes waiting for the queue to empty. */
  private readonly drainWaiters: (() => void)[] = []
  private keepAlive: NodeJS.Timeout | null = null
  /** Told once the stream ended, from either side (the client went away, or `close`). */
  onEnded: () => void = () => {}
  private endTold = false

  constructor(private readonly budget: FeedBudget) {}

  send(message: FeedMessage): void {
    this.push(bytesOf(message))
  }

  bufferedBytes(): number {
    return this.queue.bytes
  }

  close(end: FeedClose): void {
    if (this.ended) return
    this.queue.clear()
    this.push(Buffer.from(`event: end\ndata: ${JSON.stringify({ code: end.code, reason: end.reason })}\n\n`))
    this.ended = true
    this.budget.gone(this)
    this.wakeUp()
    this.tellEnded()
  }

  private tellEnded(): void {
    if (this.endTold) return
    this.endTold = true
    this.onEnded()
  }

  /** The budget's cut: ends the stream as too slow. */
  cut(): void {
    this.close(FEED_CLOSE.overBudget)
  }

  drained(): Promise<void> {
    if (this.queue.bytes === 0 || this.ended) return Promise.resolve()
    return new Promise((resolve) => this.drainWaiters.push(resolve))
  }

  private push(chunk: Buffer): void {
    if (this.ended) return
    this.queue.push(chunk)
    this.budget.holds(this, this.queue.bytes)
    this.wakeUp()
  }

  private wakeUp(): void {
    const wake = this.wake
    this.wake = null
    wake?.()
  }

  private stopped(): void {
    this.ended = true
    this.queue.clear()
    this.budget.gone(this)
    if (this.keepAlive !== null) clearInterval(this.keepAlive)
    this.keepAlive = null
    for (const resolve of this.drainWaiters.splice(0)) resolve()
  }

  private async *chunks(): AsyncGenerator<Buffer> {
    this.keepAlive = setInterval(() => this.push(KEEP_ALIVE), KEEP_ALIVE_MS)
    try {
      // The head goes out at once: the client knows the stream is open before the first event.
      yield KEEP_ALIVE
      for (;;) {
        const chunk = this.queue.takeUpTo(MAX_CHUNK_BYTES)
        if (chunk !== undefined) {
          if (!this.ended) this.budget.holds(this, this.queue.bytes)
          if (this.queue.bytes === 0) for (const resolve of this.drainWaiters.splice(0)) resolve()
          yield chunk
          continue
        }
        if (this.ended) return
        await new Promise<void>((resolve) => (this.wake = resolve))
      }
    } finally {
      this.stopped()
      this.tellEnded()
    }
  }

  /** The answer's body; `discard` (never read: the client left first) and `clientGone` (left while it waited) end it at once. */
  body(): StreamedBody {
    const gone = () => {
      this.stopped()
      this.tellEnded()
      this.wakeUp()
    }
    return new StreamedBody(this.chunks(), gone, gone)
  }
}
