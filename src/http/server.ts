/*
 * The HTTP front end on uWebSockets.js. For each request it reads
 * everything it needs from the request object before the first await (the
 * object dies with the handler), attaches onAborted at once, copies each
 * body chunk (uWS frees it after the callback), enforces the body limit
 * (MAX_FILE_BYTES for paths ending in /upload, else MAX_BODY_BYTES) from
 * Content-Length up front and again while reading, hands an ApiRequest to
 * the router, and writes the answer inside res.cork() unless the client
 * went away.
 */
import { STATUS_CODES } from 'node:http'
import type { Config } from '../config.js'
import { ApiError } from '../domain/errors.js'
import type { Services } from './call.js'
import { parseQuery, PathError, splitPath, tenantFromHost, type ApiRequest } from './request.js'
import { plainErrorResponse, type ApiResponse } from './response.js'
import { route } from './router.js'
import { loadNativeUws, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js'

const OVERRIDABLE = new Set(['PUT', 'DELETE'])

function statusLine(status: number): string {
  return `${status} ${STATUS_CODES[status] ?? 'Unknown'}`
}

function send(res: HttpResponse, state: { aborted: boolean }, response: ApiResponse, close = false): void {
  if (state.aborted) return
  res.cork(() => {
    res.writeStatus(statusLine(response.status))
    for (const [name, value] of Object.entries(response.headers)) res.writeHeader(name, value)
    res.end(response.body, close)
  })
  state.aborted = true
}

/** Uploads (paths ending in /upload) may carry a file up to maxFileBytes; every other body up to maxBodyBytes. */
function bodyLimit(segments: readonly string[], config: Config): { bytes: number; error: () => ApiError } {
  if (segments.at(-1) === 'upload') {
    return { bytes: config.maxFileBytes, error: () => new ApiError('TL01-1109', `the file is larger than ${config.maxFileBytes} bytes`) }
  }
  return { bytes: config.maxBodyBytes, error: () => new ApiError('TL01-9002', `the body is larger than ${config.maxBodyBytes} bytes`) }
}

export interface RunningServer {
  port: number
  close(): void
}

export function startHttpServer(services: Services, port: number, host: string): Promise<RunningServer> {
  const uws = loadNativeUws()
  const app: TemplatedApp = uws.App()
  const { config } = services
  app.any('/*', (res, req) => {
    const state = { aborted: false }
    res.onAborted(() => {
      state.aborted = true
    })
    const rawMethod = req.getMethod().toUpperCase()
    const url = req.getUrl()
    const queryString = req.getQuery() ?? ''
    const headers = new Map<string, string>()
    req.forEach((name, value) => headers.set(name.toLowerCase(), value))
    const remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString()

    let split: ReturnType<typeof splitPath>
    try {
      split = splitPath(url)
    } catch (error) {
      send(res, state, plainErrorResponse(new ApiError('TL01-9003', error instanceof PathError ? error.message : 'malformed path')))
      return
    }
    const tenant = tenantFromHost(headers.get('host') ?? '', config.baseDomain)
    if (tenant === undefined || !split.versioned) {
      const message = tenant === undefined ? `host '${(headers.get('host') ?? '').slice(0, 100)}' is not served here` : 'paths start with /v1'
      send(res, state, plainErrorResponse(new ApiError(tenant === undefined ? 'TL01-1005' : 'TL01-9003', message)))
      return
    }
    const query = parseQuery(queryString)
    const override = query.get('method')?.toUpperCase()
    const method = override !== undefined && OVERRIDABLE.has(override) && (rawMethod === 'POST' || rawMethod === 'GET') ? override : rawMethod

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
      }
      route(services, request).then(
        (response) => send(res, state, response),
        (error: unknown) => {
          console.error('unexpected failure outside the router:', error)
          send(res, state, plainErrorResponse(new ApiError('TL01-9001', 'internal error')))
        },
      )
    }

    const declaredLength = Number(headers.get('content-length') ?? '0')
    const limit = bodyLimit(split.segments, config)
    const tooLarge = () => plainErrorResponse(limit.error())
    if (Number.isFinite(declaredLength) && declaredLength > limit.bytes) {
      send(res, state, tooLarge(), true)
      return
    }
    const hasBody = declaredLength > 0 || headers.has('transfer-encoding')
    if (!hasBody) {
      dispatch(Buffer.alloc(0))
      return
    }
    const chunks: Buffer[] = []
    let received = 0
    res.onData((chunk, isLast) => {
      if (state.aborted) return
      received += chunk.byteLength
      if (received > limit.bytes) {
        send(res, state, tooLarge(), true)
        return
      }
      chunks.push(Buffer.from(new Uint8Array(chunk).slice()))
      if (isLast) dispatch(Buffer.concat(chunks))
    })
  })

  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket: us_listen_socket | false) => {
      if (socket === false) {
        reject(new Error(`cannot listen on ${host}:${port}`))
        return
      }
      resolve({
        port: uws.us_socket_local_port(socket),
        close: () => uws.us_listen_socket_close(socket),
      })
    })
  })
}
