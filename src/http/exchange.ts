/*
 * One request and its answer as a listener sees them (server.ts, and the
 * cluster's internal listener): the request's id (sent as X-Request-Id; the
 * client's own when it is a sane token, requestIdHeader.ts), its start time,
 * method, tenant and the route the router found (a RouteTrace), and whether
 * anything may still be written. An exchange is answered and recorded once
 * (answerWriter.ts), which then marks it `answered`; a client that goes
 * away marks it `clientGone` (uWS's onAborted). After either nothing
 * touches the response (`responseClosed`).
 */
import type { CorsOrigins } from '../config.js'
import { UNMATCHED_ROUTE, type RouteLabel } from '../observability/requestMetrics.js'
import type { RouteTrace } from './router.js'

/** Status counted for an answer whose client went away before it was written (as nginx counts it). */
export const CLIENT_CLOSED = 499

export class Exchange implements RouteTrace {
  /** The client went away (uWS's onAborted): nothing may be written to it. */
  clientGone = false
  /** The answer was written (or the connection upgraded to a WebSocket). */
  answered = false
  /** Counted and logged already. */
  recorded = false
  route: RouteLabel = UNMATCHED_ROUTE
  tenant: string | null = null
  readonly startedMs = performance.now()
  /** What the client said that shapes every answer on the API listener (CORS, compression); null: the answer as it is. */
  conventions: AnswerConventions | null = null
  /** Called when the client goes away while a streamed answer waits for the socket (streamedAnswer.ts). */
  onAbort: (() => void) | null = null

  constructor(
    readonly requestId: string,
    public method: string,
  ) {}

  /** The client went away or the answer was written: nothing more may touch `res`. */
  get responseClosed(): boolean {
    return this.clientGone || this.answered
  }
}

/** The request's Origin and Accept-Encoding, and the settings that decide what they change in its answer. */
export interface AnswerConventions {
  readonly corsOrigins: CorsOrigins | null
  readonly compressionMinBytes: number
  readonly origin: string | undefined
  readonly acceptEncoding: string | undefined
}
