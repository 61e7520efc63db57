/*
 * A listener on uWebSockets.js, as both of a node's listeners run one (the
 * API listener, server.ts; a cluster node's internal listener,
 * cluster/internalListener.ts): every request becomes an Exchange
 * (exchange.ts) with onAborted attached at once, and goes to the listener's
 * pipeline of steps (`serve`). The change feed's WebSocket routes (both
 * addresses of a tenant) are routed like any request, then upgraded
 * (changes/webSocketFeed.ts). No exception leaves the handler (it would end
 * the process, and every tenant with it): a bug on the way is answered 500
 * naming the request (handlerSafetyNet.ts). The port is listened on alone
 * (uws.ts: listenExclusive).
 */
import type { FrontEndObservers } from '../observability/frontEndObservers.js'
import { send, type WebSocketUpgrade } from './answerWriter.js'
import type { Services } from './call.js'
import { changeFeedBehavior, type FeedSocketData } from './changes/webSocketFeed.js'
import { Exchange } from './exchange.js'
import { answerFailureSafely } from './handlerSafetyNet.js'
import { keptRequestId } from './requestIdHeader.js'
import { internalError, plainErrorResponse } from './response.js'
import { TENANT_PATH_PREFIX } from './tenantAddress.js'
import { listenExclusive, loadNativeUws, type HttpRequest, type HttpResponse, type TemplatedApp } from './uws.js'

export interface RunningServer {
  port: number
  close(): void
}

/**
 * A listener's steps for one request, run inside the handler: everything it needs of `req` is read before it
 * returns (uWS frees the request then); `upgrade` is set on the change feed's WebSocket route.
 */
export type ServeRequest = (res: HttpResponse, req: HttpRequest, exchange: Exchange, upgrade: WebSocketUpgrade | undefined) => void

/** Listens on host:port, serving every request (the change feed's WebSocket included) with `serve`. */
export function startListener(services: Services, port: number, host: string, observers: FrontEndObservers, serve: ServeRequest): Promise<RunningServer> {
  const uws = loadNativeUws()
  const app: TemplatedApp = uws.App()
  const handle = (res: HttpResponse, req: HttpRequest, upgrade?: WebSocketUpgrade) => {
    const exchange = new Exchange(keptRequestId(req.getHeader('x-request-id')) ?? observers.requestIds.next(), req.getMethod().toUpperCase())
    res.onAborted(() => {
      exchange.clientGone = true
      exchange.onAbort?.()
    })
    // No exception may leave a uWS handler (it would end the process for every tenant): a bug answers 500.
    try {
      serve(res, req, exchange, upgrade)
    } catch (error) {
      console.error(`request ${exchange.requestId}: unexpected failure in the HTTP handler:`, error)
      answerFailureSafely(() => send(res, exchange, observers, plainErrorResponse(internalError(exchange.requestId))), error, 'request', exchange.requestId)
    }
  }
  const feedBehavior = changeFeedBehavior(services.config.changeFeedMaxBufferedBytes, services.feedLimits.budget, (res, req, context) =>
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
  return listenExclusive(uws, app, host, port, 'PORT').then((socket) => ({
    port: uws.us_socket_local_port(socket),
    close: () => uws.us_listen_socket_close(socket),
  }))
}
