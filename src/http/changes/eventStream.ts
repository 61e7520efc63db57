/*
 * The change feed as Server-Sent Events (text/event-stream): a FeedOutlet
 * whose events wait in a queue that the HTTP listener drains at the
 * client's pace (a StreamedBody: streamedAnswer.ts pulls the next chunk only
 * once the socket took the last one), so `bufferedBytes` is what the client
 * has not taken yet. Each event is
 *
 *   id: <seq>.<op>
 *   event: change
 *   data: <the event's JSON>
 *
 * (an EventSource sends the last id back as Last-Event-ID when it
 * reconnects, which resumes the feed). A comment line every
 * KEEP_ALIVE_MS keeps proxies from closing a quiet stream. The stream's end is an
 * `event: end` whose data says the close code and reason of the WebSocket
 * feed (changeSubscription.ts FEED_CLOSE); then the answer ends.
 */
import { StreamedBody } from '../streamedBody.js'
import type { FeedClose, FeedOutlet } from './changeSubscription.js'

export const KEEP_ALIVE_MS = 25_000

const KEEP_ALIVE = Buffer.from(': keep-alive\n\n')

export class EventStreamOutlet implements FeedOutlet {
  private readonly queue: Buffer[] = []
  private queuedBytes = 0
  private ended = false
  /** The listener waiting for the next chunk. */
  private wake: (() => void) | null = null
  /** Resumes waiting for the queue to empty. */
  private readonly drainWaiters: (() => void)[] = []
  private keepAlive: NodeJS.Timeout | null = null
  /** Told when the client went away (the listener ended the iteration). */
  onGone: () => void = () => {}

  send(id: string, json: string): void {
    this.push(Buffer.from(`id: ${id}\nevent: change\ndata: ${json}\n\n`))
  }

  bufferedBytes(): number {
    return this.queuedBytes
  }

  close(end: FeedClose): void {
    if (this.ended) return
    this.push(Buffer.from(`event: end\ndata: ${JSON.stringify({ code: end.code, reason: end.reason })}\n\n`))
    this.ended = true
    this.wakeUp()
  }

  drained(): Promise<void> {
    if (this.queuedBytes === 0 || this.ended) return Promise.resolve()
    return new Promise((resolve) => this.drainWaiters.push(resolve))
  }

  private push(chunk: Buffer): void {
    if (this.ended) return
    this.queue.push(chunk)
    this.queuedBytes += chunk.byteLength
    this.wakeUp()
  }

  private wakeUp(): void {
    const wake = this.wake
    this.wake = null
    wake?.()
  }

  private stopped(): void {
    this.ended = true
    if (this.keepAlive !== null) clearInterval(this.keepAlive)
    this.keepAlive = null
    for (const resolve of this.drainWaiters.splice(0)) resolve()
  }

  private async *chunks(): AsyncGenerator<Buffer> {
    this.keepAlive = setInterval(() => this.push(KEEP_ALIVE), KEEP_ALIVE_MS)
    let finished = false
    try {
      // The head goes out at once: the client knows the stream is open before the first event.
      yield KEEP_ALIVE
      for (;;) {
        const chunk = this.queue.shift()
        if (chunk !== undefined) {
          this.queuedBytes -= chunk.byteLength
          if (this.queuedBytes === 0) for (const resolve of this.drainWaiters.splice(0)) resolve()
          yield chunk
          continue
        }
        if (this.ended) {
          finished = true
          return
        }
        await new Promise<void>((resolve) => (this.wake = resolve))
      }
    } finally {
      this.stopped()
      if (!finished) this.onGone()
    }
  }

  /** The answer's body; `discard` (never read: the client left first) counts as the client going away. */
  body(): StreamedBody {
    return new StreamedBody(this.chunks(), () => {
      this.stopped()
      this.onGone()
    })
  }
}
