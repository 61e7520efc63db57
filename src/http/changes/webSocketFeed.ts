/*
 * The change feed over a uWebSockets.js WebSocket. The listener upgrades a
 * `GET /v1/changes` that asks for it once the route accepted it
 * (routes/changes.ts answers with a `webSocket` start instead of a body);
 * `open` then starts the subscription on a WebSocketOutlet, `drain` tells it
 * the socket took some of what waited, `close` that the socket closed.
 *
 * Each event is one text message, its bytes made once for all the sockets
 * it goes to (`bytesOf`: the same message object reaches every socket of
 * an event). A message sent goes first into the outlet's queue
 * (byteQueue.ts, which holds the shared bytes, not copies); the queues are
 * written at the end of the round that filled them (one microtask for all
 * outlets: the feed hands out a tenant's entries of a group commit in one
 * round, tenants/changeFeed.ts), each socket's messages inside one
 * `ws.cork`, so a socket costs one system call per round, however many
 * events the round brought it: each event is still a message of its own.
 * uWS copies what a socket does not take at once into a buffer of that
 * socket's own; the outlet hands uWS messages only while that buffer holds
 * less than SOCKET_BUFFER_BYTES, and keeps the rest queued, handed on as
 * the socket drains. `bufferedBytes` is both together: the
 * subscription keeps it under CHANGE_FEED_MAX_BUFFERED_BYTES (4409 past
 * it), and the node's budget (feedBudget.ts) counts it with every other
 * stream's and cuts the streams holding the most first. A stream that ends
 * drops its queue at once, so the close frame follows at most
 * SOCKET_BUFFER_BYTES (and one message) of what uWS held: the memory of a
 * cut stream goes with it, and its client gets the close code soon after
 * its last event. uWS's own ceiling (maxBackpressure) is set far above
 * that; should a message still be dropped there (send answers DROPPED),
 * the socket is closed at once as too slow, so a client never sees a gap:
 * what it got is a prefix of the feed, and it resumes after its last event.
 * The client's own messages are read and ignored (at most
 * MAX_CLIENT_MESSAGE_BYTES each).
 */
import type { WebSocket, WebSocketBehavior } from 'uWebSockets.js'
import type { WebSocketStart } from '../response.js'
import { ByteQueue } from './byteQueue.js'
import type { BudgetedStream, FeedBudget } from './feedBudget.js'
import { FEED_CLOSE, type FeedClose, type FeedMessage, type FeedOutlet } from './feedOutlet.js'

const MAX_CLIENT_MESSAGE_BYTES = 4096
/** What uWS may hold for a socket before further events wait in the outlet's queue (see the top). */
export const SOCKET_BUFFER_BYTES = 64 * 1024
/** uWS's per-socket ceiling as a multiple of CHANGE_FEED_MAX_BUFFERED_BYTES or SOCKET_BUFFER_BYTES, the larger (see the top). */
const UWS_CEILING_FACTOR = 16
/** uWS's send status for a message it dropped (over maxBackpressure). */
const DROPPED = 2

/** What the listener keeps with each feed socket. */
export interface FeedSocketData {
  readonly start: WebSocketStart
  outlet?: WebSocketOutlet
  subscription?: ReturnType<WebSocketStart>
}

/** Each message's bytes, made once however many sockets it goes to; kept while a message is referenced. */
const messageBytes = new WeakMap<FeedMessage, Buffer>()

function bytesOf(message: FeedMessage): Buffer {
  let bytes = messageBytes.get(message)
  if (bytes === undefined) {
    bytes = Buffer.from(message.json)
    messageBytes.set(message, bytes)
  }
  return bytes
}

/** Outlets whose queue holds messages not yet handed to uWS: written together when the round ends (see the top). */
let dueOutlets: WebSocketOutlet[] = []

function writeDueOutlets(): void {
  const outlets = dueOutlets
  dueOutlets = []
  for (const outlet of outlets) {
    try {
      outlet.writeQueued()
    } catch (error) {
      // One socket's failure must not keep the others' events back.
      console.error('a change feed socket failed to write, closing it:', error)
      outlet.failed()
    }
  }
}

export class WebSocketOutlet implements FeedOutlet, BudgetedStream {
  private open = true
  private readonly waiting = new ByteQueue()
  private readonly drainWaiters: (() => void)[] = []
  /** Listed in dueOutlets. */
  private due = false

  constructor(
    private readonly ws: WebSocket<FeedSocketData>,
    private readonly lowWaterBytes: number,
    private readonly budget: FeedBudget,
  ) {}

  send(message: FeedMessage): void {
    if (!this.open) return
    this.waiting.push(bytesOf(message))
    if (this.due) return
    this.due = true
    if (dueOutlets.push(this) === 1) queueMicrotask(writeDueOutlets)
  }

  /** The round ended: hands uWS what the queue holds, up to SOCKET_BUFFER_BYTES, in one cork. */
  writeQueued(): void {
    this.due = false
    this.tookSome()
  }

  /**
   * Hands uWS queued messages while its buffer for the socket holds less than SOCKET_BUFFER_BYTES, corked; a lone
   * message goes without a cork (one system call either way, and a cork is a call back into JavaScript).
   */
  private handOverWaiting(): void {
    while (this.open && this.waiting.length > 0) {
      let room = SOCKET_BUFFER_BYTES - this.ws.getBufferedAmount()
      if (room <= 0) return
      if (this.waiting.length === 1) {
        if (this.ws.send(this.waiting.shift() as Buffer, false) === DROPPED) this.close(FEED_CLOSE.tooSlow)
        return
      }
      let dropped = false
      this.ws.cork(() => {
        for (let next = this.waiting.shift(); next !== undefined; next = this.waiting.shift()) {
          if (this.ws.send(next, false) === DROPPED) {
            dropped = true
            return
          }
          room -= next.byteLength
          if (room <= 0) return
        }
      })
      if (dropped) this.close(FEED_CLOSE.tooSlow)
    }
  }

  bufferedBytes(): number {
    return this.open ? this.ws.getBufferedAmount() + this.waiting.bytes : 0
  }

  close(end: FeedClose): void {
    if (!this.open) return
    this.open = false
    this.waiting.clear()
    this.budget.gone(this)
    this.ws.end(end.code, end.reason)
    this.released()
  }

  /** Writing failed (a bug): ends the stream, as the feed ends a subscriber whose delivery threw. */
  failed(): void {
    try {
      this.close(FEED_CLOSE.failed)
    } catch {
      this.onClose()
    }
  }

  /** The budget's cut: closes as too slow (the listener's close handler then tells the subscription). */
  cut(): void {
    this.close(FEED_CLOSE.overBudget)
  }

  drained(): Promise<void> {
    if (!this.open || this.bufferedBytes() <= this.lowWaterBytes) return Promise.resolve()
    return new Promise((resolve) => this.drainWaiters.push(resolve))
  }

  /** uWS: the socket took some of its buffer: hand it what waits, up to SOCKET_BUFFER_BYTES. */
  onDrain(): void {
    this.tookSome()
  }

  /** Hands on what waits; tells the budget what is held now, and a resume waiting for room that there is some. */
  private tookSome(): void {
    if (!this.open) return
    this.handOverWaiting()
    if (!this.open) return
    const held = this.bufferedBytes()
    this.budget.holds(this, held)
    if (held <= this.lowWaterBytes) this.released()
  }

  /** uWS: the socket closed (the client, a timeout, or our own end). */
  onClose(): void {
    this.open = false
    this.waiting.clear()
    this.budget.gone(this)
    this.released()
  }

  private released(): void {
    for (const resolve of this.drainWaiters.splice(0)) resolve()
  }
}

/** The behaviour of the feed's WebSocket route; `upgrade` is the listener's (it routes the request first). */
export function changeFeedBehavior(maxBufferedBytes: number, budget: FeedBudget, upgrade: NonNullable<WebSocketBehavior<FeedSocketData>['upgrade']>): WebSocketBehavior<FeedSocketData> {
  return {
    maxPayloadLength: MAX_CLIENT_MESSAGE_BYTES,
    maxBackpressure: Math.max(maxBufferedBytes, SOCKET_BUFFER_BYTES) * UWS_CEILING_FACTOR,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade,
    open: (ws) => {
      const data = ws.getUserData()
      const outlet = new WebSocketOutlet(ws, Math.floor(maxBufferedBytes / 4), budget)
      data.outlet = outlet
      data.subscription = data.start(outlet)
    },
    drain: (ws) => ws.getUserData().outlet?.onDrain(),
    close: (ws, code, message) => {
      const data = ws.getUserData()
      data.outlet?.onClose()
      data.subscription?.gone(code, Buffer.from(message).toString())
    },
  }
}
