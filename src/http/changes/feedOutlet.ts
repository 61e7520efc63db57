/*
 * What carries a change feed's events to its client (a WebSocket:
 * webSocketFeed.ts; Server-Sent Events: eventStream.ts), and the ways a
 * stream ends, which the client reads as WebSocket close codes or as an
 * event stream's last event (README "The change feed").
 */
/** How a stream ends (WebSocket close codes; an event stream's last event). */
export const FEED_CLOSE = {
  stopping: { code: 1001, reason: 'the server is stopping: reconnect with since' },
  accessLost: { code: 4401, reason: 'access lost (logged out, token revoked or expired, user deactivated): sign in again' },
  tooSlow: { code: 4409, reason: 'too slow: too many events waited for the client; reconnect with since' },
  historyGone: { code: 4410, reason: 'the history to resume from is gone: reload, then connect without since' },
  moved: { code: 4503, reason: 'the tenant moved: reconnect with since' },
  failed: { code: 1011, reason: 'the stream failed on the server: reconnect with since' },
} as const

/** A close code and its reason: one of FEED_CLOSE, or one a forwarded feed passes on (forwardedWebSocket.ts). */
export interface FeedClose {
  readonly code: number
  readonly reason: string
}

/** What carries the events to the client. */
export interface FeedOutlet {
  /** Writes one event (`id` is `<seq>.<op>`). */
  send(id: string, json: string): void
  /** Bytes written and not yet taken by the client. */
  bufferedBytes(): number
  /** Ends the stream, saying why. */
  close(end: FeedClose): void
  /** Resolves once the client took what was written (or went away). */
  drained(): Promise<void>
}
