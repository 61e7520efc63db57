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
  overBudget: { code: 4409, reason: "too slow: the server's room for waiting events is full and this client had the most waiting; reconnect with since" },
  historyGone: { code: 4410, reason: 'the history to resume from is gone: reload, then connect without since' },
  moved: { code: 4503, reason: 'the tenant moved: reconnect with since' },
  failed: { code: 1011, reason: 'the stream failed on the server: reconnect with since' },
} as const

/** A close code and its reason: one of FEED_CLOSE, or one a forwarded feed passes on (forwardedWebSocket.ts). */
export interface FeedClose {
  readonly code: number
  readonly reason: string
}

/**
 * An event to write: its JSON text and, for an event of this node's feed, the change it tells (its id is
 * `<seq>.<op>`). The same object goes to every stream that gets the event (domain/changes.ts EventText), so each
 * carrier makes its bytes once per event, not once per stream.
 */
export interface FeedMessage {
  readonly json: string
  readonly change?: { readonly seq: number; readonly op: number }
}

/** What carries the events to the client. */
export interface FeedOutlet {
  /** Writes one event. */
  send(message: FeedMessage): void
  /** Bytes written and not yet taken by the client. */
  bufferedBytes(): number
  /** Ends the stream, saying why; what still waited for the client is dropped (it resumes after the last event it got). */
  close(end: FeedClose): void
  /** Resolves once the client took what was written (or went away). */
  drained(): Promise<void>
}
