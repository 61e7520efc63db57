/*
 * Writing a streamed body (streamedBody.ts) on uWebSockets.js with
 * backpressure. The first chunk is pulled before anything is written, so a
 * source that fails at once is still answered with an error status by the
 * caller. Then the head and each chunk are written inside `res.cork`
 * (uWS sends the body chunked, as it does for any `write` before `end`);
 * when `write` says the socket's buffer is full, the next chunk is pulled
 * only after `onWritable` (or once the client went away: `onAbort`, which
 * the listener's onAborted calls; while the next chunk is awaited, that
 * tells the body's `clientGone`). A source that fails after the head is
 * out cannot change the status any more: the connection is closed, so the
 * client sees a cut answer rather than a short one that looks whole. An
 * answer ended early (client gone, source failed) ends its source's
 * iteration (`return`), so the source releases what it holds.
 */
import type { HttpResponse } from './uws.js'
import type { StreamedBody } from './streamedBody.js'

/** The exchange as the writer sees it: the listener sets `clientGone` and calls `onAbort` when the client goes away. */
export interface StreamedExchange {
  readonly clientGone: boolean
  onAbort: (() => void) | null
}

export type StreamOutcome =
  /** Every chunk was written and the answer ended. */
  | { kind: 'sent'; bytes: number }
  /** The client went away before the end (`bytes` were written). */
  | { kind: 'clientGone'; bytes: number }
  /** The source failed before its first chunk: nothing was written, the caller answers. */
  | { kind: 'failedBeforeHead'; error: unknown }
  /** The source failed after the head was written: the connection was closed. */
  | { kind: 'failedAfterHead'; error: unknown; bytes: number }

/**
 * The writable events of one answer. uWS calls a response's writable handler through a borrow: it takes the
 * handler, calls it, and puts it back unless the handler was cleared, so a handler registered meanwhile is
 * overwritten. uWebSockets.js runs the promise reactions of the call before that, so a writer that registers a new handler
 * for each wait (after resuming from the last one) loses it, and a later wait is never woken: the answer stalls for
 * good. So one handler is registered for the whole answer, at its first wait, and each wait only says whom it wakes.
 * uWS also writes out what it holds for a response by itself only while no writable handler is set: the handler
 * does it (an empty cork), or the last chunks written could wait for the next write (a quiet change feed's).
 */
class WritableEvents {
  private waiter: (() => void) | null = null
  private registered = false

  constructor(
    private readonly res: HttpResponse,
    private readonly exchange: StreamedExchange,
  ) {}

  /** Resolves once the socket can take more, or the client went away. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiter = resolve
      this.exchange.onAbort = resolve
      if (this.registered) return
      this.registered = true
      this.res.onWritable(() => {
        this.res.cork(() => {})
        const waiter = this.waiter
        if (waiter === null) return true
        this.waiter = null
        this.exchange.onAbort = null
        waiter()
        return true
      })
    })
  }
}

/**
 * Writes `body` on `res`: `writeHead` (status and headers, called inside a cork) before the first chunk, then the
 * chunks at the socket's pace, then the end (`close`: and the connection).
 */
export async function writeStreamed(res: HttpResponse, exchange: StreamedExchange, body: StreamedBody, writeHead: () => void, close: boolean): Promise<StreamOutcome> {
  const iterator = body.chunks[Symbol.asyncIterator]()
  const writable = new WritableEvents(res, exchange)
  let headWritten = false
  let bytes = 0
  let finished = false
  try {
    for (;;) {
      let next: IteratorResult<Buffer>
      try {
        // A source may wait long for its next chunk (a quiet change feed): it hears at once of a client gone meanwhile.
        exchange.onAbort = body.clientGone
        next = await iterator.next()
        exchange.onAbort = null
      } catch (error) {
        finished = true
        if (!headWritten) return { kind: 'failedBeforeHead', error }
        if (!exchange.clientGone) res.close()
        return { kind: 'failedAfterHead', error, bytes }
      }
      if (exchange.clientGone) return { kind: 'clientGone', bytes }
      if (next.done === true) {
        finished = true
        res.cork(() => {
          if (!headWritten) writeHead()
          res.end(undefined, close)
        })
        return { kind: 'sent', bytes }
      }
      const chunk = next.value
      let ok = true
      res.cork(() => {
        if (!headWritten) writeHead()
        ok = res.write(chunk)
      })
      headWritten = true
      bytes += chunk.byteLength
      if (!ok) await writable.next()
      if (exchange.clientGone) return { kind: 'clientGone', bytes }
    }
  } finally {
    exchange.onAbort = null
    if (!finished) await iterator.return?.(undefined)
  }
}
