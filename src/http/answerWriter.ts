/*
 * How an exchange (exchange.ts) ends, on either listener: an answer written
 * inside res.cork() unless the client went away, a streamed answer (an
 * export: streamedBody.ts) written chunk by chunk at the client's pace
 * (streamedAnswer.ts), or the change feed's WebSocket upgrade. Each is
 * recorded once: counted in the request metrics and, when on, logged as one
 * line (status 499 when the client went away first); a body written into a
 * lent buffer is given back (json/answerBuffers.ts).
 *
 * Every answer says in a `Server-Timing: app;dur=<ms>` header how long the
 * server took from the request's arrival to the answer being ready (for a
 * read, including the wait for the log's flush), leaving out the sending: a
 * client can tell the server's time from the network's. Every answer says
 * `X-Content-Type-Options: nosniff` (answerHead.ts). An answer of the API
 * listener gets its CORS headers and is compressed for a client that takes
 * it (cors.ts, compression.ts) here, where it is written.
 */
import type { Config } from '../config.js'
import { giveBack } from '../json/answerBuffers.js'
import type { FrontEndObservers } from '../observability/frontEndObservers.js'
import { ALWAYS_HEADERS, statusLine } from './answerHead.js'
import type { FeedSocketData } from './changes/webSocketFeed.js'
import { compressAnswer } from './compression.js'
import { withCorsHeaders } from './cors.js'
import { CLIENT_CLOSED, type AnswerConventions, type Exchange } from './exchange.js'
import { internalError, plainErrorResponse, type ApiResponse, type WebSocketStart } from './response.js'
import { writeStreamed, type StreamOutcome } from './streamedAnswer.js'
import { StreamedBody } from './streamedBody.js'
import type { HttpResponse, us_socket_context_t } from './uws.js'

/** What a WebSocket upgrade needs of its request, read before the handler returns (uWS frees the request then). */
export interface WebSocketUpgrade {
  readonly key: string
  readonly protocol: string
  readonly extensions: string
  readonly context: us_socket_context_t
}

/** What the request's Origin and Accept-Encoding change in its answers on the API listener (CORS, compression). */
export function conventionsOf(config: Config, headers: ReadonlyMap<string, string>): AnswerConventions {
  return { corsOrigins: config.corsOrigins, compressionMinBytes: config.compressionMinBytes, origin: headers.get('origin'), acceptEncoding: headers.get('accept-encoding') }
}

/** The answer with its CORS headers, compressed when the client takes it (cors.ts, compression.ts). */
function withConventions(response: ApiResponse, exchange: Exchange): ApiResponse {
  const conventions = exchange.conventions
  if (conventions === null) return response
  // CORS off (no CORS_ORIGINS): the answer's headers stay as they are, and are not copied.
  const headers = conventions.corsOrigins === null ? response.headers : withCorsHeaders(conventions.corsOrigins, conventions.origin, response.headers)
  return compressAnswer(headers === response.headers ? response : { ...response, headers }, conventions.acceptEncoding, conventions.compressionMinBytes, exchange.method === 'HEAD')
}

function record(observers: FrontEndObservers, exchange: Exchange, status: number, bytes: number): void {
  exchange.recorded = true
  const durationMs = performance.now() - exchange.startedMs
  observers.requests.observe(exchange.route, exchange.method, status, durationMs)
  observers.requestLog?.write({
    time: Date.now(),
    requestId: exchange.requestId,
    method: exchange.method,
    route: exchange.route.route,
    tenant: exchange.tenant,
    status,
    durationMs: Math.round(durationMs * 1000) / 1000,
    bytes,
  })
}

/** An answer as the router must give it; anything else (a bug) is answered as a 500 instead of reaching uWS. */
function isApiResponse(response: unknown): response is ApiResponse {
  if (typeof response !== 'object' || response === null) return false
  const { status, headers, body } = response as Partial<ApiResponse>
  return Number.isInteger(status) && typeof headers === 'object' && headers !== null && (typeof body === 'string' || Buffer.isBuffer(body) || body instanceof StreamedBody)
}

function byteLengthOf(body: string | Buffer): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
}

/**
 * The status and every header, in two calls into uWS instead of one per header: uWS writes a header as `name: value`
 * and CRLF, so the first header's value carries the others' lines after it, joined here (a call into uWS's C++
 * costs more than the concatenation). What goes on the wire is byte for byte what a call per header wrote. Every value
 * here is ours or checked: the request id is a sane token (requestIdHeader.ts) or made here, the rest as before.
 */
function writeHead(res: HttpResponse, exchange: Exchange, response: ApiResponse): void {
  res.writeStatus(statusLine(response.status))
  let lines = `${exchange.requestId}\r\nServer-Timing: app;dur=${(performance.now() - exchange.startedMs).toFixed(3)}${ALWAYS_HEADER_LINES}`
  const { headers } = response
  for (const name in headers) lines += `\r\n${name}: ${headers[name] as string}`
  res.writeHeader('X-Request-Id', lines)
}

/** The headers every answer carries (answerHead.ts), as the lines that follow another header's value. */
const ALWAYS_HEADER_LINES = Object.entries(ALWAYS_HEADERS)
  .map(([name, value]) => `\r\n${name}: ${value}`)
  .join('')

/** Writes a streamed answer; a source that fails before its first chunk is answered 500 instead. */
function sendStreamed(res: HttpResponse, exchange: Exchange, observers: FrontEndObservers, response: ApiResponse, body: StreamedBody, close: boolean): void {
  exchange.recorded = true
  const ended = (outcome: StreamOutcome): void => {
    if (outcome.kind === 'failedBeforeHead' || outcome.kind === 'failedAfterHead') console.error(`request ${exchange.requestId}: the streamed answer failed:`, outcome.error)
    if (outcome.kind === 'failedBeforeHead') {
      // Nothing was written: the request is answered 500 like any other failure (499 if the client left meanwhile).
      exchange.recorded = false
      send(res, exchange, observers, plainErrorResponse(internalError(exchange.requestId)), close)
      return
    }
    exchange.answered = true
    record(observers, exchange, outcome.kind === 'clientGone' ? CLIENT_CLOSED : response.status, outcome.bytes)
  }
  writeStreamed(res, exchange, body, () => writeHead(res, exchange, response), close).then(ended, (error: unknown) => ended({ kind: 'failedAfterHead', error, bytes: 0 }))
}

/** Writes the exchange's answer (closing the connection after it when `close`) and records it; nothing once it was. */
export function send(res: HttpResponse, exchange: Exchange, observers: FrontEndObservers, response: ApiResponse, close = false): void {
  if (exchange.recorded) return
  if (!isApiResponse(response)) {
    console.error(`request ${exchange.requestId}: the router gave no answer but`, response)
    response = plainErrorResponse(internalError(exchange.requestId))
  }
  const { body } = response
  if (exchange.clientGone) {
    record(observers, exchange, CLIENT_CLOSED, 0)
    if (body instanceof StreamedBody) body.discard()
    else giveBack(body)
    return
  }
  // CORS headers, and the body compressed when the client takes it: `sent` is what goes on the wire.
  const written = withConventions(response, exchange)
  const sent = written.body
  if (sent instanceof StreamedBody && exchange.method !== 'HEAD') {
    sendStreamed(res, exchange, observers, written, sent, close)
    return
  }
  res.cork(() => {
    writeHead(res, exchange, written)
    // A HEAD answer has the headers of the answer but no body: a keep-alive client would read the body as its next
    // answer. uWS keeps a connection whose reported length was not sent as busy (and resets it), so report 0.
    if (exchange.method === 'HEAD' || sent instanceof StreamedBody) res.endWithoutBody(0, close)
    // A 304 has no body, and no Content-Length unless it is the 200's (RFC 9110 §8.6): none is said. Without
    // arguments uWS writes none (an `undefined` length is written as 2^63) and keeps the connection.
    else if (written.status === 304 && !close) res.endWithoutBody()
    else res.end(sent, close)
  })
  exchange.answered = true
  record(observers, exchange, written.status, sent instanceof StreamedBody ? 0 : byteLengthOf(sent))
  // uWS copied the body (what the socket did not take at once is in its own buffer): the next answer may write there.
  if (body instanceof StreamedBody) body.discard()
  else giveBack(body)
}

/** Upgrades the exchange to the change feed's WebSocket its route answered with (recorded as a 101). */
export function upgradeTo(res: HttpResponse, exchange: Exchange, observers: FrontEndObservers, start: WebSocketStart, upgrade: WebSocketUpgrade): void {
  if (exchange.clientGone) {
    record(observers, exchange, CLIENT_CLOSED, 0)
    return
  }
  res.cork(() => res.upgrade<FeedSocketData>({ start }, upgrade.key, upgrade.protocol, upgrade.extensions, upgrade.context))
  exchange.answered = true
  record(observers, exchange, 101, 0)
}
