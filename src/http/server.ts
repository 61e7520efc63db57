/*
 * The HTTP front end on uWebSockets.js. For each request it reads
 * everything it needs from the request object before the first await (the
 * object dies with the handler), attaches onAborted at once, copies each
 * body chunk (uWS frees it after the callback), enforces the body limit
 * (MAX_FILE_BYTES for paths ending in /upload, else MAX_BODY_BYTES) from
 * Content-Length up front and again while reading (limitedBody.ts), hands
 * an ApiRequest to the router, and writes the answer inside res.cork()
 * unless the client went away. A read that waits for nothing comes back from the router as
 * the answer itself, not a promise (maybePromise.ts), and is written before
 * the handler returns. The query is read first, so an error found before routing
 * (malformed or unknown path, unknown host, a body over the limit) is
 * written by errorResponse in the format the request asked for, as the
 * router writes its errors. A request with two Host headers, or whose body
 * framing reads two ways, is refused first (400 and the connection closed,
 * messageRules.ts; refuseAndClose says why a turn later). Every answer
 * says `X-Content-Type-Options: nosniff` (answerHead.ts). No exception
 * leaves the handler: a bug on the way is answered 500 naming the request
 * (handlerSafetyNet.ts). The port
 * is listened on alone (uws.ts: listenExclusive). A cluster node runs a
 * second listener, the internal one, for requests forwarded by the other
 * nodes (forwarding.ts) and the cluster's own calls, each taken only with
 * its own credential (internalAccess.ts). The tenant is named by the host
 * or, on the public address, by the path (tenantAddress.ts); the client's
 * address is the peer's, or what a trusted proxy reports (clientAddress.ts).
 * `GET /readyz` is answered before anything else, outside /v1: the load
 * balancer's health check (admin/readiness.ts says ready or not). An
 * OPTIONS request is answered next, before routing and without a token: a
 * CORS preflight, or a clear 4xx (cors.ts). Every answer of the API
 * listener gets its CORS headers and is compressed for a client that
 * takes it (compression.ts) where it is written, in send().
 *
 * Each request is an Exchange: its id (sent as X-Request-Id; the client's
 * own X-Request-Id when it is a sane token, requestIdHeader.ts), start time,
 * method, tenant and the route the router found. Every answer says in a
 * `Server-Timing: app;dur=<ms>` header how long the server took from the
 * request's arrival to the answer being ready (for a read, including the
 * wait for the log's flush), leaving out the sending: a client can tell
 * the server's time from the network's. When the answer is
 * written (or found to have no client any more: status 499) the exchange
 * is counted once in the request metrics and, when on, logged as one line,
 * and a body written into a lent buffer gives it back (json/answerBuffers.ts).
 * A streamed body (an export: streamedBody.ts) is written chunk by chunk at
 * the client's pace (streamedAnswer.ts) and recorded once it ended.
 */
import type { Config, CorsOrigins } from '../config.js'
import { accessDenied, ApiError } from '../domain/errors.js'
import { giveBack } from '../json/answerBuffers.js'
import type { FrontEndObservers } from '../observability/frontEndObservers.js'
import { UNMATCHED_ROUTE, type RouteLabel } from '../observability/requestMetrics.js'
import { ALWAYS_HEADERS, statusLine } from './answerHead.js'
import type { Services } from './call.js'
import { changeFeedBehavior, type FeedSocketData } from './changes/webSocketFeed.js'
import { clientAddressOf, TrustedProxies } from './clientAddress.js'
import { clusterCredentials } from './clusterCredentials.js'
import { compressAnswer } from './compression.js'
import { answerOptions, withCorsHeaders } from './cors.js'
import { answerFailureSafely, writeWhenReady } from './handlerSafetyNet.js'
import { FORWARDED_FOR_HEADER } from './forwarding.js'
import { internalAccess, reachesForwardedTenant, type InternalAccess } from './internalAccess.js'
import { declaredBodyBytes, declaredOverLimit, LimitedBody } from './limitedBody.js'
import { headProblem } from './messageRules.js'
import { keepHeader, OnceFieldCounts } from './requestHeaders.js'
import { keptRequestId } from './requestIdHeader.js'
import { parseQuery, PathError, splitPath, tenantLabelProblem, type ApiRequest } from './request.js'
import { errorResponse, internalError, plainErrorResponse, type ApiResponse, type RequestHead, type WebSocketStart } from './response.js'
import { route, type RouteTrace } from './router.js'
import { referencePage } from './routes/docsPage.js'
import { writeStreamed, type StreamOutcome } from './streamedAnswer.js'
import { StreamedBody } from './streamedBody.js'
import { TENANT_PATH_PREFIX, tenantAddressOf } from './tenantAddress.js'
import { listenExclusive, loadNativeUws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_socket_context_t } from './uws.js'

const OVERRIDABLE = new Set(['PUT', 'PATCH', 'DELETE'])

/** The body of a request without one (zero bytes: nothing can write into it). */
const NO_BODY = Buffer.alloc(0)

/** Status counted for an answer whose client went away before it was written (as nginx counts it). */
const CLIENT_CLOSED = 499

class Exchange implements RouteTrace {
  /** The client went away, or the answer was written: nothing more may touch `res`. */
  aborted = false
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
}

/** The request's Origin and Accept-Encoding, and the settings that decide what they change in its answer. */
interface AnswerConventions {
  readonly corsOrigins: CorsOrigins | null
  readonly compressionMinBytes: number
  readonly origin: string | undefined
  readonly acceptEncoding: string | undefined
}

/** The answer with its CORS headers, compressed when the client takes it (cors.ts, compression.ts). */
function withConventions(response: ApiResponse, exchange: Exchange): ApiResponse {
  const conventions = exchange.conventions
  if (conventions === null) return response
  const headers = withCorsHeaders(conventions.corsOrigins, conventions.origin, response.headers)
  return compressAnswer({ ...response, headers }, conventions.acceptEncoding, conventions.compressionMinBytes, exchange.method === 'HEAD')
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

function writeHead(res: HttpResponse, exchange: Exchange, response: ApiResponse): void {
  res.writeStatus(statusLine(response.status))
  res.writeHeader('X-Request-Id', exchange.requestId)
  res.writeHeader('Server-Timing', `app;dur=${(performance.now() - exchange.startedMs).toFixed(3)}`)
  for (const name in ALWAYS_HEADERS) res.writeHeader(name, ALWAYS_HEADERS[name] as string)
  for (const name in response.headers) res.writeHeader(name, response.headers[name] as string)
}

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
    exchange.aborted = true
    record(observers, exchange, outcome.kind === 'clientGone' ? CLIENT_CLOSED : response.status, outcome.bytes)
  }
  writeStreamed(res, exchange, body, () => writeHead(res, exchange, response), close).then(ended, (error: unknown) =>
    ended({ kind: 'failedAfterHead', error, bytes: 0 }),
  )
}

function send(res: HttpResponse, exchange: Exchange, observers: FrontEndObservers, response: ApiResponse, close = false): void {
  if (exchange.recorded) return
  if (!isApiResponse(response)) {
    console.error(`request ${exchange.requestId}: the router gave no answer but`, response)
    response = plainErrorResponse(internalError(exchange.requestId))
  }
  const { body } = response
  if (exchange.aborted) {
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
  exchange.aborted = true
  record(observers, exchange, written.status, sent instanceof StreamedBody ? 0 : byteLengthOf(sent))
  // uWS copied the body (what the socket did not take at once is in its own buffer): the next answer may write there.
  if (body instanceof StreamedBody) body.discard()
  else giveBack(body)
}

// Uploads (paths ending in /upload) may carry a file up to maxFileBytes; every other body up to maxBodyBytes.

function isUpload(segments: readonly string[]): boolean {
  return segments[segments.length - 1] === 'upload'
}

function bodyLimitBytes(segments: readonly string[], config: Config): number {
  return isUpload(segments) ? config.maxFileBytes : config.maxBodyBytes
}

function bodyTooLarge(segments: readonly string[], config: Config): ApiError {
  if (isUpload(segments)) return new ApiError('TL01-1109', `the file is larger than ${config.maxFileBytes} bytes (MAX_FILE_BYTES)`)
  return new ApiError('TL01-9006', `the body is larger than ${config.maxBodyBytes} bytes (MAX_BODY_BYTES)`)
}

/** The client's address on the API listener: the connection's peer, or what a trusted proxy reports (clientAddress.ts). */
function clientAddress(res: HttpResponse, headers: ReadonlyMap<string, string>, trusted: TrustedProxies): string {
  const text = (address: ArrayBuffer) => Buffer.from(address).toString()
  return clientAddressOf(text(res.getRemoteAddressAsText()), text(res.getProxiedRemoteAddressAsText()), headers.get('x-forwarded-for'), trusted)
}

export interface RunningServer {
  port: number
  close(): void
}

/**
 * The internal listener of a cluster node (forwarding.ts): a tenant's /v1 routes for requests forwarded by the other
 * nodes, with the client's address in X-Forwarded-For, and the cluster's own calls; each with its own credential
 * derived from the secret (clusterCredentials.ts, internalAccess.ts; else 403).
 */
export interface InternalListener {
  /** CLUSTER_SECRET. */
  readonly secret: string
  /**
   * The cluster's own calls between nodes, outside /v1 (cluster/releaseCall.ts, http/tenantWrites.ts): for a path that
   * is one, the handler of its body; null: not one of them.
   */
  readonly clusterCall?: (method: string, path: string) => ((body: Buffer) => Promise<ApiResponse>) | null
}

/** What `GET /readyz` answers on this listener (admin/readiness.ts): a load balancer's health check (HTTP/1.0 too). */
export interface ReadinessProbe {
  readonly ready: boolean
  readonly phase: string
}

/** What a WebSocket upgrade needs of its request, read before the handler returns (uWS frees the request then). */
interface WebSocketUpgrade {
  readonly key: string
  readonly protocol: string
  readonly extensions: string
  readonly context: us_socket_context_t
}

export interface ListenerOptions {
  readonly internal?: InternalListener
  readonly readiness?: ReadinessProbe
}

/** The path of the health check on the listeners, outside /v1. */
const READYZ_PATH = '/readyz'

export function startHttpServer(services: Services, port: number, host: string, observers: FrontEndObservers, options: ListenerOptions = {}): Promise<RunningServer> {
  const uws = loadNativeUws()
  const credentials = options.internal === undefined ? null : clusterCredentials(options.internal.secret)
  const trustedProxies = new TrustedProxies(services.config.trustedProxies)
  const { readiness } = options
  const app: TemplatedApp = uws.App()
  const { config } = services
  const handle = (res: HttpResponse, req: HttpRequest, upgrade?: WebSocketUpgrade) => {
    const state = new Exchange(keptRequestId(req.getHeader('x-request-id')) ?? observers.requestIds.next(), req.getMethod().toUpperCase())
    res.onAborted(() => {
      state.aborted = true
      state.onAbort?.()
    })
    // No exception may leave a uWS handler (it would end the process for every tenant): a bug answers 500.
    try {
      serve(res, req, state, upgrade)
    } catch (error) {
      console.error(`request ${state.requestId}: unexpected failure in the HTTP handler:`, error)
      answerFailureSafely(() => send(res, state, observers, plainErrorResponse(internalError(state.requestId))), error, 'request', state.requestId)
    }
  }
  // The change feed as a WebSocket, at both addresses of a tenant: routed like any request, then upgraded (changes/webSocketFeed.ts).
  const feedBehavior = changeFeedBehavior(config.changeFeedMaxBufferedBytes, (res, req, context) =>
    handle(res, req, {
      key: req.getHeader('sec-websocket-key'),
      protocol: req.getHeader('sec-websocket-protocol'),
      extensions: req.getHeader('sec-websocket-extensions'),
      context,
    }),
  )
  app.ws<FeedSocketData>('/v1/changes', feedBehavior)
  app.ws<FeedSocketData>(`${TENANT_PATH_PREFIX}:tenant/v1/changes`, feedBehavior)
  app.any('/*', (res, req) => handle(res, req))
  /** A cluster call on the internal listener (node credential checked): its handler runs on the body, or 404. */
  const serveClusterCall = (res: HttpResponse, state: Exchange, headers: ReadonlyMap<string, string>, method: string, url: string) => {
    const plainRefuse = (error: ApiError) => send(res, state, observers, plainErrorResponse(error), true)
    const clusterCall = options.internal?.clusterCall?.(method, url) ?? null
    if (clusterCall === null) {
      plainRefuse(new ApiError('TL01-9003', `no cluster call ${method} ${url.slice(0, 100)}`))
      return
    }
    const failed = (error: unknown) => {
      console.error(`request ${state.requestId}: cluster call ${url} failed:`, error)
      plainRefuse(internalError(state.requestId))
    }
    const whole = (body: Buffer) => writeWhenReady(clusterCall(body), (response) => send(res, state, observers, response), failed, 'cluster call', state.requestId)
    readBody(res, state, headers, config.maxBodyBytes, () => plainRefuse(new ApiError('TL01-9006', `the body is larger than ${config.maxBodyBytes} bytes`)), whole, () =>
      plainRefuse(internalError(state.requestId)),
    )
  }
  /** Upgrades to the change feed's WebSocket the request whose route answered with a start. */
  const upgradeTo = (res: HttpResponse, state: Exchange, start: WebSocketStart, upgrade: WebSocketUpgrade | undefined, head: RequestHead) => {
    if (upgrade === undefined) {
      send(res, state, observers, errorResponse(head, new ApiError('TL01-9007', 'a WebSocket is opened on GET /v1/changes only')))
      return
    }
    if (state.aborted) {
      record(observers, state, CLIENT_CLOSED, 0)
      return
    }
    res.cork(() => res.upgrade<FeedSocketData>({ start }, upgrade.key, upgrade.protocol, upgrade.extensions, upgrade.context))
    state.aborted = true
    record(observers, state, 101, 0)
  }
  const serve = (res: HttpResponse, req: HttpRequest, state: Exchange, upgrade: WebSocketUpgrade | undefined) => {
    const rawMethod = state.method
    const url = req.getUrl()
    if (url === READYZ_PATH && readiness !== undefined && (rawMethod === 'GET' || rawMethod === 'HEAD')) {
      const body = JSON.stringify({ status: readiness.phase })
      send(res, state, observers, { status: readiness.ready ? 200 : 503, headers: { 'Content-Type': 'application/json' }, body })
      return
    }
    const queryString = req.getQuery() ?? ''
    const headers = new Map<string, string>()
    const counts = new OnceFieldCounts()
    req.forEach((name, value) => keepHeader(headers, counts, name, value))
    // Looked up on the first call (ApiRequest.remoteAddress); the response is still open then (after it, '').
    let peer: string | undefined
    const remoteAddress = (): string => (peer ??= state.aborted ? '' : clientAddress(res, headers, trustedProxies))
    const query = parseQuery(queryString)
    const refuse = (head: RequestHead, error: ApiError, close = false) => send(res, state, observers, errorResponse(head, error), close)
    // Two Host headers, a body framing that reads two ways (messageRules.ts): refused before anything reads the body.
    const problem = headProblem(counts, headers, url)
    if (problem !== null) {
      refuseAndClose(res, state, () => errorResponse({ query, headers, jsonpSuffix: false }, problem))
      return
    }
    // The node a request was forwarded from adds CORS and compresses: the internal listener answers as it is.
    if (credentials === null) {
      state.conventions = { corsOrigins: config.corsOrigins, compressionMinBytes: config.compressionMinBytes, origin: headers.get('origin'), acceptEncoding: headers.get('accept-encoding') }
    }
    if (rawMethod === 'OPTIONS' && credentials === null) {
      // A preflight has no body; an OPTIONS that sends one is answered without reading it, and its connection closed.
      const unreadBody = declaredBodyBytes(headers) !== 0 || headers.has('transfer-encoding')
      const preflight = answerOptions(config.corsOrigins, headers)
      if (preflight instanceof ApiError) refuse({ query, headers, jsonpSuffix: false }, preflight, unreadBody)
      else send(res, state, observers, { status: 204, headers: preflight, body: '' }, unreadBody)
      return
    }
    // The internal listener: the cluster's own calls with the node credential, forwarded requests with theirs.
    let access: InternalAccess | null = null
    if (credentials !== null) {
      access = internalAccess(url, headers, credentials)
      if (access.kind === 'refused') {
        send(res, state, observers, plainErrorResponse(accessDenied(access.reason)), true)
        return
      }
      if (access.kind === 'node') {
        serveClusterCall(res, state, headers, rawMethod, url)
        return
      }
      peer = headers.get(FORWARDED_FOR_HEADER) ?? ''
    }

    // The tenant, by host or by path (tenantAddress.ts), and the path below its address.
    const address = tenantAddressOf(headers.get('host') ?? '', url, config.baseDomain)
    let split: ReturnType<typeof splitPath>
    try {
      split = splitPath(address.path)
    } catch (error) {
      // The path did not split, so whether it ends in the `.json` of JSONP is read from the raw text.
      const head = { query, headers, jsonpSuffix: /\.json\/*$/.test(url) }
      refuse(head, new ApiError('TL01-9003', error instanceof PathError ? error.message : 'malformed path'))
      return
    }
    const head: RequestHead = { query, headers, jsonpSuffix: split.jsonpSuffix }
    const tenant = address.tenant
    const labelProblem = tenantLabelProblem(tenant)
    if (labelProblem !== null) {
      refuse(head, labelProblem)
      return
    }
    if (access !== null && !reachesForwardedTenant(access, tenant, split.versioned)) {
      send(res, state, observers, plainErrorResponse(accessDenied('a forwarded request reaches the /v1 routes of the tenant it was forwarded for only')), true)
      return
    }
    state.tenant = tenant ?? null
    // The entry page and the interactive reference, outside /v1 (routes/docsPage.ts).
    const page = tenant === undefined || split.versioned ? null : referencePage(rawMethod, url, headers.get('accept'))
    if (page !== null) {
      send(res, state, observers, page)
      return
    }
    if (tenant === undefined || !split.versioned) {
      const message = tenant !== undefined ? 'paths start with /v1' : address.prefix !== '' ? `'${address.prefix.slice(0, 100)}' names no account` : `host '${(headers.get('host') ?? '').slice(0, 100)}' is not served here`
      refuse(head, new ApiError(tenant === undefined ? 'TL01-1005' : 'TL01-9003', message))
      return
    }
    const override = query.get('method')?.toUpperCase()
    const method = override !== undefined && OVERRIDABLE.has(override) && (rawMethod === 'POST' || rawMethod === 'GET') ? override : rawMethod
    state.method = method

    const dispatch = (body: Buffer) => {
      const request: ApiRequest = {
        method,
        segments: split.segments,
        query,
        headers,
        body,
        tenant,
        remoteAddress,
        jsonpSuffix: split.jsonpSuffix,
        inBatch: false,
        requestId: state.requestId,
        addressPrefix: address.prefix,
        rawQuery: queryString,
        forwarded: credentials !== null,
      }
      const answered = (response: ApiResponse) =>
        response.webSocket === undefined ? send(res, state, observers, response) : upgradeTo(res, state, response.webSocket, upgrade, head)
      // A read that waits for nothing is answered here, inside the handler (maybePromise.ts).
      const answer = route(services, request, undefined, state)
      if (!(answer instanceof Promise)) {
        answered(answer)
        return
      }
      writeWhenReady(
        answer,
        answered,
        (error) => {
          console.error(`request ${state.requestId}: unexpected failure outside the router:`, error)
          refuse(head, internalError(state.requestId))
        },
        'request',
        state.requestId,
      )
    }

    readBody(res, state, headers, bodyLimitBytes(split.segments, config), () => refuse(head, bodyTooLarge(split.segments, config), true), dispatch, () =>
      refuse(head, internalError(state.requestId)),
    )
  }

  /**
   * Answers a request whose head breaks a rule of messageRules.ts, and closes its connection, one event-loop turn
   * later. This uWS build goes on parsing what already arrived on the connection once the handler returns, and
   * serves a request that followed in the same read even after an answer that closes (the next request clears the
   * close): `Content-Length: 0` twice-framed with a request behind it was answered twice. Unanswered, the refused
   * request is still pending when uWS reads the next one, and uWS then ends the connection itself: nothing behind a
   * refused head is ever served. A refused request with nothing behind it gets its 400.
   */
  function refuseAndClose(res: HttpResponse, state: Exchange, answer: () => ApiResponse): void {
    setImmediate(() => {
      try {
        send(res, state, observers, answer(), true)
      } catch (error) {
        console.error(`request ${state.requestId}: its refusal could not be made:`, error)
        answerFailureSafely(() => send(res, state, observers, plainErrorResponse(internalError(state.requestId)), true), error, 'request', state.requestId)
      }
    })
  }

  /**
   * Reads the request's body (up to `limitBytes`, from Content-Length up front and again while reading) and hands it
   * to `whole`; `tooLarge` answers a body over the limit, `failed` a bug in `whole`.
   */
  function readBody(res: HttpResponse, state: Exchange, headers: ReadonlyMap<string, string>, limitBytes: number, tooLarge: () => void, whole: (body: Buffer) => void, failed: () => void): void {
    const declaredBytes = declaredBodyBytes(headers)
    if (declaredOverLimit(declaredBytes, limitBytes)) {
      tooLarge()
      return
    }
    const hasBody = declaredBytes > 0 || headers.has('transfer-encoding')
    if (!hasBody) {
      whole(NO_BODY)
      return
    }
    const body = new LimitedBody(limitBytes)
    res.onData((chunk, isLast) => {
      if (state.aborted) return
      // uWS frees the chunk after this callback: the body keeps a copy.
      if (!body.add(Buffer.from(new Uint8Array(chunk).slice()))) {
        tooLarge()
        return
      }
      if (!isLast) return
      try {
        whole(body.bytes())
      } catch (error) {
        console.error(`request ${state.requestId}: unexpected failure in the HTTP handler:`, error)
        answerFailureSafely(failed, error, 'request', state.requestId)
      }
    })
  }

  return listenExclusive(uws, app, host, port, 'PORT').then((socket) => ({
    port: uws.us_socket_local_port(socket),
    close: () => uws.us_listen_socket_close(socket),
  }))
}
