/*
 * The change feed over a uWebSockets.js WebSocket. The listener upgrades a
 * `GET /v1/changes` that asks for it once the route accepted it
 * (routes/changes.ts answers with a `webSocket` start instead of a body);
 * `open` then starts the subscription on a WebSocketOutlet, `drain` tells it
 * the client took what was buffered, `close` that the client went away.
 *
 * Each event is one text message. uWS buffers what the socket does not take
 * at once; `bufferedBytes` is that buffer, which the subscription keeps
 * under CHANGE_FEED_MAX_BUFFERED_BYTES (4409 past it). uWS's own ceiling
 * (maxBackpressure) is set far above ours; should a message still be
 * dropped there (send answers DROPPED), the socket is closed at once as too
 * slow, so a client never sees a gap: what it got is a prefix of the feed,
 * and it resumes after its last event. The client's own messages are read
 * and ignored (at most MAX_CLIENT_MESSAGE_BYTES each).
 */
import type { WebSocket, WebSocketBehavior } from 'uWebSockets.js'
import type { WebSocketStart } from '../response.js'
import { FEED_CLOSE, type FeedClose, type FeedOutlet } from './changeSubscription.js'

const MAX_CLIENT_MESSAGE_BYTES = 4096
/** uWS's per-socket ceiling as a multiple of ours (see the top). */
const UWS_CEILING_FACTOR = 16
/** uWS's send status for a message it dropped (over maxBackpressure). */
const DROPPED = 2

/** What the listener keeps with each feed socket. */
export interface FeedSocketData {
  readonly start: WebSocketStart
  outlet?: WebSocketOutlet
  subscription?: { gone(): void }
}

export class WebSocketOutlet implements FeedOutlet {
  private open = true
  private readonly drainWaiters: (() => void)[] = []

  constructor(
    private readonly ws: WebSocket<FeedSocketData>,
    private readonly lowWaterBytes: number,
  ) {}

  send(_id: string, json: string): void {
    if (!this.open) return
    if (this.ws.send(json, false) === DROPPED) this.close(FEED_CLOSE.tooSlow)
  }

  bufferedBytes(): number {
    return this.open ? this.ws.getBufferedAmount() : 0
  }

  close(end: FeedClose): void {
    if (!this.open) return
    this.open = false
    this.ws.end(end.code, end.reason)
    this.released()
  }

  drained(): Promise<void> {
    if (!this.open || this.ws.getBufferedAmount() <= this.lowWaterBytes) return Promise.resolve()
    return new Promise((resolve) => this.drainWaiters.push(resolve))
  }

  /** uWS: the socket's buffer drained. */
  onDrain(): void {
    if (this.open && this.ws.getBufferedAmount() > this.lowWaterBytes) return
    this.released()
  }

  /** uWS: the socket closed (the client, a timeout, or our own end). */
  onClose(): void {
    this.open = false
    this.released()
  }

  private released(): void {
    for (const resolve of this.drainWaiters.splice(0)) resolve()
  }
}

/** The behaviour of the feed's WebSocket route; `upgrade` is the listener's (it routes the request first). */
export function changeFeedBehavior(maxBufferedBytes: number, upgrade: NonNullable<WebSocketBehavior<FeedSocketData>['upgrade']>): WebSocketBehavior<FeedSocketData> {
  return {
    maxPayloadLength: MAX_CLIENT_MESSAGE_BYTES,
    maxBackpressure: maxBufferedBytes * UWS_CEILING_FACTOR,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade,
    open: (ws) => {
      const data = ws.getUserData()
      const outlet = new WebSocketOutlet(ws, Math.floor(maxBufferedBytes / 4))
      data.outlet = outlet
      data.subscription = data.start(outlet)
    },
    drain: (ws) => ws.getUserData().outlet?.onDrain(),
    close: (ws) => {
      const data = ws.getUserData()
      data.outlet?.onClose()
      data.subscription?.gone()
    },
  }
}
