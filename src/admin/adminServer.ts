/*
 * The admin listener: a second uWebSockets.js app, bound to 127.0.0.1 only,
 * for operators (metrics, health, and operator actions such as an online
 * restore). Every route needs `Authorization: Bearer <admin key>` unless it
 * was registered as public (health checks); a wrong or missing key gets 401
 * in the error body of design §4.
 *
 * Routes are registered with `route(method, pattern, handler)`, at any time
 * (the table is read per request). A pattern is a path such as
 * `/tenants/:tenant/restore`; `:name` captures one segment into `params`.
 * The same uWS rules as the public front end apply: request data is read
 * before the first await, onAborted is attached at once, body chunks are
 * copied, the answer is written inside cork() unless the client went away.
 *
 * A handler may answer with `chunks` instead of `body` (long operator work
 * reporting as it goes): the status and headers go out at once, each chunk
 * as it comes (chunked transfer encoding), and the answer ends with the
 * iterable. A client that goes away stops the writing, not the iterable.
 */
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import { ApiError } from '../domain/errors.js'
import { parseQuery } from '../http/request.js'
import { plainErrorResponse } from '../http/response.js'
import { loadNativeUws, type HttpResponse, type us_listen_socket } from '../http/uws.js'
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
export interface AdminStreamedResponse {
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
  readonly handler: AdminHandler
  readonly public: boolean
  readonly maxBodyBytes: number
}

export function jsonAnswer(status: number, data: unknown): AdminResponse {
  return { status, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(data) }
}

function errorAnswer(error: ApiError): AdminResponse {
  return plainErrorResponse(error)
}

/** The answer for what a handler threw: an ApiError as it is, anything else 500 TL01-9001 naming a logged request id. */
export function answerForError(error: unknown, method: string, path: string): AdminResponse {
  if (error instanceof ApiError) return errorAnswer(error)
  const requestId = randomUUID()
  console.error(`admin request ${requestId} ${method} ${path} failed:`, error)
  return errorAnswer(new ApiError('TL01-9001', 'internal error', `request id ${requestId}`))
}

function splitAdminPath(path: string): string[] | null {
  const parts = path.split('/').filter((part) => part !== '')
  try {
    return parts.map((part) => decodeURIComponent(part))
  } catch {
    return null
  }
}

function matchRoute(parts: readonly string[], segments: readonly string[]): Record<string, string> | null {
  if (parts.length !== segments.length) return null
  const params: Record<string, string> = {}
  for (let index = 0; index < parts.length; index += 1) {
    const part = parts[index] as string
    const segment = segments[index] as string
    if (part.startsWith(':')) params[part.slice(1)] = segment
    else if (part !== segment) return null
  }
  return params
}

export class AdminServer {
  private readonly routes: AdminRoute[] = []
  private socket: us_listen_socket | null = null
  port = 0

  constructor(private readonly adminKey: string) {}

  /** Adds a route; `pattern` is a path like `/metrics` or `/tenants/:tenant/restore`. */
  route(method: string, pattern: string, handler: AdminHandler, options: AdminRouteOptions = {}): void {
    const parts = splitAdminPath(pattern)
    if (parts === null) throw new Error(`admin route pattern '${pattern}' is not a valid path`)
    const upper = method.toUpperCase()
    const duplicate = this.routes.some((route) => route.method === upper && route.parts.join('/') === parts.join('/'))
    if (duplicate) throw new Error(`admin route ${upper} ${pattern} is registered twice`)
    this.routes.push({ method: upper, parts, handler, public: options.public === true, maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES })
  }

  listen(port: number): Promise<number> {
    const uws = loadNativeUws()
    const app = uws.App()
    app.any('/*', (res, req) => {
      const state = { aborted: false }
      res.onAborted(() => {
        state.aborted = true
      })
      const method = req.getMethod().toUpperCase()
      const path = req.getUrl()
      const query = parseQuery(req.getQuery() ?? '')
      const headers = new Map<string, string>()
      req.forEach((name, value) => headers.set(name.toLowerCase(), value))
      // No exception may leave a uWS handler (it would end the process): a bug answers 500.
      try {
        this.handle(res, state, method, path, query, headers)
      } catch (error) {
        send(res, state, answerForError(error, method, path))
      }
    })
    return new Promise((resolve, reject) => {
      app.listen(ADMIN_HOST, port, (socket: us_listen_socket | false) => {
        if (socket === false) {
          reject(new Error(`the admin listener cannot listen on ${ADMIN_HOST}:${port} (set ADMIN_PORT)`))
          return
        }
        this.socket = socket
        this.port = uws.us_socket_local_port(socket)
        resolve(this.port)
      })
    })
  }

  close(): void {
    if (this.socket === null) return
    loadNativeUws().us_listen_socket_close(this.socket)
    this.socket = null
  }

  private find(method: string, segments: readonly string[]): { route: AdminRoute; params: Record<string, string> } | { allowed: string[] } {
    const allowed: string[] = []
    for (const route of this.routes) {
      const params = matchRoute(route.parts, segments)
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
    res: HttpResponse,
    state: { aborted: boolean },
    method: string,
    path: string,
    query: ReadonlyMap<string, string>,
    headers: ReadonlyMap<string, string>,
  ): void {
    const segments = splitAdminPath(path)
    if (segments === null) {
      send(res, state, errorAnswer(new ApiError('TL01-9003', 'malformed path')))
      return
    }
    const found = this.find(method, segments)
    if (!('route' in found)) {
      // Without the key nobody learns which admin paths exist.
      if (!this.authorized(headers)) send(res, state, unauthorized())
      else if (found.allowed.length > 0) send(res, state, errorAnswer(new ApiError('TL01-9004', `${method} is not allowed on ${path}`, null, [], { Allow: found.allowed.join(', ') })))
      else send(res, state, errorAnswer(new ApiError('TL01-9003', `no admin route at ${path}`)))
      return
    }
    const { route, params } = found
    if (!route.public && !this.authorized(headers)) {
      send(res, state, unauthorized())
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
      answer
        .then((response) => ('chunks' in response ? sendStreamed(res, state, response, method, path) : send(res, state, response)))
        .catch((error: unknown) => send(res, state, answerForError(error, method, path)))
        .catch((error: unknown) => console.error(`admin ${method} ${path}: its error answer could not be written:`, error))
    }
    const tooLarge = () => errorAnswer(new ApiError('TL01-9002', `the body is larger than ${route.maxBodyBytes} bytes`))
    const declaredLength = Number(headers.get('content-length') ?? '0')
    if (Number.isFinite(declaredLength) && declaredLength > route.maxBodyBytes) {
      send(res, state, tooLarge(), true)
      return
    }
    if (!(declaredLength > 0 || headers.has('transfer-encoding'))) {
      run(Buffer.alloc(0))
      return
    }
    const chunks: Buffer[] = []
    let received = 0
    res.onData((chunk, isLast) => {
      if (state.aborted) return
      received += chunk.byteLength
      if (received > route.maxBodyBytes) {
        send(res, state, tooLarge(), true)
        return
      }
      chunks.push(Buffer.from(new Uint8Array(chunk).slice()))
      if (isLast) run(Buffer.concat(chunks))
    })
  }
}

function unauthorized(): AdminResponse {
  return errorAnswer(new ApiError('TL01-1001', 'the admin listener needs Authorization: Bearer <admin key>', null, [], { 'WWW-Authenticate': 'Bearer' }))
}

function send(res: HttpResponse, state: { aborted: boolean }, response: AdminResponse, close = false): void {
  if (state.aborted) return
  res.cork(() => {
    res.writeStatus(`${response.status} ${STATUS_CODES[response.status] ?? 'Unknown'}`)
    for (const [name, value] of Object.entries(response.headers ?? {})) res.writeHeader(name, value)
    res.end(response.body, close)
  })
  state.aborted = true
}

function sendStreamed(res: HttpResponse, state: { aborted: boolean }, response: AdminStreamedResponse, method: string, path: string): void {
  if (!state.aborted) {
    res.cork(() => {
      res.writeStatus(`${response.status} ${STATUS_CODES[response.status] ?? 'Unknown'}`)
      for (const [name, value] of Object.entries(response.headers ?? {})) res.writeHeader(name, value)
    })
  }
  void (async () => {
    try {
      for await (const chunk of response.chunks) {
        if (!state.aborted) res.cork(() => res.write(chunk))
      }
    } catch (error) {
      // The handler broke its promise not to throw here; the answer ends short of its last chunk.
      console.error(`admin request ${method} ${path}: its streamed answer failed:`, error)
    }
    if (state.aborted) return
    res.cork(() => res.end())
    state.aborted = true
  })()
}
