/*
 * The admin listener: a second HTTP listener, bound to 127.0.0.1 only,
 * for operators (metrics, health, and operator actions such as an online
 * restore). Every route needs `Authorization: Bearer <admin key>` unless it
 * was registered as public (health checks); a wrong or missing key gets 401
 * in the error body of ARCHITECTURE.md §4.
 *
 * Routes are registered with `route(method, pattern, handler)`, at any time
 * (the table is read per request). A pattern is a path such as
 * `/tenants/:tenant/restore`; `:name` captures one segment into `params`
 * (http/pathPattern.ts, as the API's routes).
 * It runs on Node's own HTTP server, not on uWebSockets.js: it carries
 * little traffic, and it must answer what health checkers send. uWS (the
 * build we use) takes only `<METHOD> /<path> HTTP/1.1` with a Host header
 * and holds any other request line unanswered until its idle timeout,
 * so an HTTP/1.0 check (HAProxy's default `OPTIONS / HTTP/1.0`, no Host)
 * saw a dead service. Here HTTP/1.0 is answered (the connection closes
 * after the answer unless the client asked to keep it), with or without
 * Host; an HTTP/1.1 request without Host, one with two Host headers and
 * one whose target is a whole URL get 400 (http/messageRules.ts). Every
 * answer, including one to a request Node's parser refused, carries
 * `X-Content-Type-Options: nosniff` (http/answerHead.ts). A body is read up
 * to the route's limit as the API's is (http/limitedBody.ts), and no
 * exception leaves a handler (http/handlerSafetyNet.ts). The port is
 * listened on alone (no SO_REUSEPORT): a second server on the same
 * ADMIN_PORT fails to start.
 *
 * A handler may answer with `chunks` instead of `body` (long operator work
 * reporting as it goes): the status and headers go out at once, each chunk
 * as it comes (chunked transfer encoding), and the answer ends with the
 * iterable. A client that goes away stops the writing, not the iterable.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { assertionFailed } from '../assert.js'
import { ApiError } from '../domain/errors.js'
import { ALWAYS_HEADERS, statusText } from '../http/answerHead.js'
import { answerFailureSafely, writeWhenReady } from '../http/handlerSafetyNet.js'
import { declaredBodyBytes, declaredOverLimit, LimitedBody } from '../http/limitedBody.js'
import { headProblem } from '../http/messageRules.js'
import { compileSegments, matchCompiled, type PathPattern } from '../http/pathPattern.js'
import { parseQuery } from '../http/request.js'
import { keepHeader, OnceFieldCounts } from '../http/requestHeaders.js'
import { failureAsApiError } from '../http/failureError.js'
import { plainErrorResponse } from '../http/response.js'
import { portTakenMessage } from '../http/portTaken.js'
import { RequestIds } from '../observability/requestId.js'
import { sameSecret } from './adminKey.js'

export const ADMIN_HOST = '127.0.0.1'
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

export interface AdminRequest {
  readonly method: string
  /** The path as sent, e.g. `/tenants/acme/restore` (without the query). */
  readonly path: string
  /** Segments captured by the route's `:name` parts, percent-decoded. */
  readonly params: Readonly<Record<string, string>>
  readonly query: ReadonlyMap<string, string>
  /** Lower-cased header names. */
  readonly headers: ReadonlyMap<string, string>
  readonly body: Buffer
}

export interface AdminResponse {
  status: number
  headers?: Record<string, string>
  body: string | Buffer
}

/** An answer written as it is produced; the handler must not let `chunks` throw (it reports failure in a chunk). */
interface AdminStreamedResponse {
  status: number
  headers?: Record<string, string>
  chunks: AsyncIterable<string>
}

/** Throw an ApiError for a clear 4xx/5xx; anything else becomes 500 TL01-9001 with a logged request id. */
export type AdminHandler = (request: AdminRequest) => Promise<AdminResponse | AdminStreamedResponse> | AdminResponse | AdminStreamedResponse

export interface AdminRouteOptions {
  /** Answer without the admin key (health checks only). */
  public?: boolean
  /** Largest request body this route accepts (default 1 MiB). */
  maxBodyBytes?: number
}

interface AdminRoute {
  readonly method: string
  readonly parts: readonly string[]
  readonly pattern: PathPattern
  readonly handler: AdminHandler
  readonly public: boolean
  readonly maxBodyBytes: number
}

/** One request's answer: `ended` once it is over, sent whole or its client gone; nothing more is written then. */
interface AdminExchange {
  ended: boolean
}

/** Ids naming an admin request that failed with a bug, in its 500 and in the log (as the API's requests are named). */
const adminRequestIds = new RequestIds()

export function jsonAnswer(status: number, data: unknown): AdminResponse {
  return { status, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(data) }
}

function errorAnswer(error: ApiError): AdminResponse {
  return plainErrorResponse(error)
}

/** The answer for what a handler threw: an ApiError as it is, anything else 500 TL01-9001 naming a logged request id. */
export function answerForError(error: unknown, method: string, path: string): AdminResponse {
  return errorAnswer(
    failureAsApiError(
      error,
      () => adminRequestIds.next(),
      (id) => `admin request ${id} ${method} ${path}`,
    ),
  )
}

function splitAdminPath(path: string): string[] | null {
  const parts = path.split('/').filter((part) => part !== '')
  try {
    return parts.map((part) => decodeURIComponent(part))
  } catch {
    return null
  }
}

export class AdminServer {
  private readonly routes: AdminRoute[] = []
  private server: http.Server | null = null
  port = 0

  constructor(private readonly adminKey: string) {}

  /** Adds a route; `pattern` is a path like `/metrics` or `/tenants/:tenant/restore`. */
  route(method: string, pattern: string, handler: AdminHandler, options: AdminRouteOptions = {}): void {
    const parts = splitAdminPath(pattern)
    if (parts === null) assertionFailed(`admin route pattern '${pattern}' is not a valid path`)
    const upper = method.toUpperCase()
    const duplicate = this.routes.some((route) => route.method === upper && route.parts.join('/') === parts.join('/'))
    if (duplicate) assertionFailed(`admin route ${upper} ${pattern} is registered twice`)
    this.routes.push({ method: upper, parts, pattern: compileSegments(parts), handler, public: options.public === true, maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES })
  }

  listen(port: number): Promise<number> {
    const server = http.createServer({ requireHostHeader: false }, (req, res) => this.serve(req, res))
    // A request Node's parser refuses (malformed head, headers too large) gets the error body and nosniff too.
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
      if (socket.writable && error.code !== 'ECONNRESET') socket.end(rawAnswer(errorAnswer(new ApiError('TL01-1105', `malformed HTTP request (${error.code ?? 'unreadable'})`))))
      else socket.destroy()
    })
    return new Promise((resolve, reject) => {
      const refused = (error: NodeJS.ErrnoException) => {
        reject(error.code === 'EADDRINUSE' || error.code === 'EACCES' ? new Error(portTakenMessage(ADMIN_HOST, port, 'ADMIN_PORT')) : error)
      }
      server.once('error', refused)
      // Node listens without SO_REUSEPORT: a port another process holds is refused (EADDRINUSE), never shared.
      server.listen({ host: ADMIN_HOST, port, exclusive: true }, () => {
        server.off('error', refused)
        server.on('error', (error) => console.error('admin listener:', error))
        this.server = server
        this.port = (server.address() as AddressInfo).port
        resolve(this.port)
      })
    })
  }

  close(): void {
    if (this.server === null) return
    this.server.close()
    this.server.closeIdleConnections()
    this.server = null
  }

  /** One request: its head checked (one Host, one body framing, a path as target, a Host on HTTP/1.1), then routed. */
  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const exchange: AdminExchange = { ended: false }
    res.on('close', () => {
      exchange.ended = true
    })
    const target = req.url ?? ''
    const queryAt = target.indexOf('?')
    const path = queryAt < 0 ? target : target.slice(0, queryAt)
    const query = parseQuery(queryAt < 0 ? '' : target.slice(queryAt + 1))
    const headers = new Map<string, string>()
    const counts = new OnceFieldCounts()
    for (let index = 0; index + 1 < req.rawHeaders.length; index += 2) {
      keepHeader(headers, counts, req.rawHeaders[index] as string, req.rawHeaders[index + 1] as string)
    }
    const problem = headProblem(counts, headers, target) ?? (req.httpVersion === '1.1' && counts.host === 0 ? noHost() : null)
    if (problem !== null) {
      req.resume()
      send(res, exchange, errorAnswer(problem), true)
      return
    }
    const method = (req.method ?? '').toUpperCase()
    // An exception in a request handler of Node's server would end the process: a bug answers 500.
    try {
      this.handle(req, res, exchange, method, path, query, headers)
    } catch (error) {
      answerFailureSafely((failure) => send(res, exchange, answerForError(failure, method, path)), error, 'admin', `${method} ${path}`)
    }
  }

  private find(method: string, segments: readonly string[]): { route: AdminRoute; params: Record<string, string> } | { allowed: string[] } {
    const allowed: string[] = []
    for (const route of this.routes) {
      const params = matchCompiled(route.pattern, segments)
      if (params === null) continue
      if (route.method === method) return { route, params }
      allowed.push(route.method)
    }
    return { allowed }
  }

  private authorized(headers: ReadonlyMap<string, string>): boolean {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '')
    return match !== null && sameSecret(match[1] as string, this.adminKey)
  }

  private handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    exchange: AdminExchange,
    method: string,
    path: string,
    query: ReadonlyMap<string, string>,
    headers: ReadonlyMap<string, string>,
  ): void {
    const segments = splitAdminPath(path)
    if (segments === null) {
      send(res, exchange, errorAnswer(new ApiError('TL01-9003', 'malformed path')))
      return
    }
    const found = this.find(method, segments)
    if (!('route' in found)) {
      // Without the key nobody learns which admin paths exist.
      if (!this.authorized(headers)) send(res, exchange, unauthorized())
      else if (found.allowed.length > 0) send(res, exchange, errorAnswer(new ApiError('TL01-9004', `${method} is not allowed on ${path}`, null, [], { Allow: found.allowed.join(', ') })))
      else send(res, exchange, errorAnswer(new ApiError('TL01-9003', `no admin route at ${path}`)))
      return
    }
    const { route, params } = found
    if (!route.public && !this.authorized(headers)) {
      send(res, exchange, unauthorized())
      return
    }
    const run = (body: Buffer) => {
      const request: AdminRequest = { method, path, params, query, headers, body }
      let answer: Promise<AdminResponse | AdminStreamedResponse>
      try {
        answer = Promise.resolve(route.handler(request))
      } catch (error) {
        answer = Promise.reject(error)
      }
      writeWhenReady(
        answer,
        (response) => ('chunks' in response ? sendStreamed(res, exchange, response, method, path) : send(res, exchange, response)),
        (error) => send(res, exchange, answerForError(error, method, path)),
        'admin',
        `${method} ${path}`,
      )
    }
    const tooLarge = () => errorAnswer(new ApiError('TL01-9006', `the body is larger than ${route.maxBodyBytes} bytes`))
    if (declaredOverLimit(declaredBodyBytes(headers), route.maxBodyBytes)) {
      send(res, exchange, tooLarge(), true)
      return
    }
    const body = new LimitedBody(route.maxBodyBytes)
    let refusedBody = false
    req.on('data', (chunk: Buffer) => {
      if (refusedBody) return
      if (!body.add(chunk)) {
        refusedBody = true
        send(res, exchange, tooLarge(), true)
      }
    })
    req.on('end', () => {
      if (!refusedBody && !exchange.ended) run(body.bytes())
    })
  }
}

function unauthorized(): AdminResponse {
  return errorAnswer(new ApiError('TL01-1001', 'the admin listener needs Authorization: Bearer <admin key>', null, [], { 'WWW-Authenticate': 'Bearer' }))
}

/** `close`: end the connection after the answer (a body that was refused is still on its way). */
function send(res: http.ServerResponse, exchange: AdminExchange, response: AdminResponse, close = false): void {
  if (exchange.ended) return
  exchange.ended = true
  // A length up front: no chunked encoding, and an HTTP/1.0 client that asked for keep-alive can have it.
  const headers: Record<string, string> = { ...ALWAYS_HEADERS, ...response.headers, 'Content-Length': String(Buffer.byteLength(response.body)) }
  if (close) headers.Connection = 'close'
  res.writeHead(response.status, statusText(response.status), headers)
  res.end(response.body)
}

/** An answer written straight to a socket Node's parser gave up on (it closes the connection). */
function rawAnswer(response: AdminResponse): string {
  const body = typeof response.body === 'string' ? response.body : response.body.toString('utf8')
  const headers = { ...ALWAYS_HEADERS, ...response.headers, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' }
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`)
  return `HTTP/1.1 ${response.status} ${statusText(response.status)}\r\n${lines.join('')}\r\n${body}`
}

function sendStreamed(res: http.ServerResponse, exchange: AdminExchange, response: AdminStreamedResponse, method: string, path: string): void {
  if (!exchange.ended) res.writeHead(response.status, statusText(response.status), { ...ALWAYS_HEADERS, ...response.headers })
  void (async () => {
    try {
      for await (const chunk of response.chunks) {
        if (!exchange.ended) res.write(chunk)
      }
    } catch (error) {
      // The handler broke its promise not to throw here; the answer ends short of its last chunk.
      console.error(`admin request ${method} ${path}: its streamed answer failed:`, error)
    }
    if (exchange.ended) return
    exchange.ended = true
    res.end()
  })()
}

function noHost(): ApiError {
  return new ApiError('TL01-1105', 'an HTTP/1.1 request must carry a Host header (RFC 9112 §3.2)')
}
