/*
 * The API listener on uWebSockets.js (listener.ts): each request goes
 * through a pipeline of named steps, each of which either answers it and
 * ends the pipeline, or hands on what it found:
 *
 *   1. readinessAnswer    GET /readyz, before anything else is read: the
 *                         load balancer's health check (readyz.ts)
 *   2. IncomingRequest    the path, query and headers read off uWS's request
 *                         before it dies with the handler (incomingRequest.ts)
 *   3. refusesBrokenHead  two Host headers, a body framing that reads two
 *                         ways: 400 and the connection closed (brokenHead.ts)
 *   4. conventionsOf      the Origin and Accept-Encoding every answer of this
 *                         listener is given CORS headers and compressed by,
 *                         where it is written (answerWriter.ts)
 *   5. answersPreflight   OPTIONS, without a token: a CORS preflight or a
 *                         clear 4xx (preflight.ts)
 *   6. addressOf          the tenant by host or by path, the path split
 *                         (requestAddress.ts)
 *   7. answersDocsPage    the entry page and the reference, outside /v1
 *   8. reachesApi         else a host not served, a path outside /v1: 4xx
 *   9. overriddenMethod   `?method=` on a GET or POST (methodOverride.ts)
 *  10. readRoutedBody     the body up to its path's limit (requestBody.ts)
 *  11. dispatch           the router, and its answer written (dispatch.ts:
 *                         steps 7 to 11 are serveAddressed, on both listeners)
 *
 * An error found before routing (malformed or unknown path, unknown host, a
 * body over the limit) is written in the format the request asked for, as
 * the router writes its errors: the query is read first. A cluster node
 * runs a second listener with its own pipeline on the same steps, for the
 * requests the other nodes forward and the cluster's own calls
 * (cluster/internalListener.ts).
 */
import { TrustedProxies } from './clientAddress.js'
import { conventionsOf, send } from './answerWriter.js'
import type { Services } from './call.js'
import { serveAddressed } from './dispatch.js'
import { refusesBrokenHead } from './brokenHead.js'
import { IncomingRequest } from './incomingRequest.js'
import { startListener, type RunningServer } from './listener.js'
import { answersPreflight } from './preflight.js'
import { readinessAnswer, type ReadinessProbe } from './readyz.js'
import { addressOf } from './requestAddress.js'
import type { FrontEndObservers } from '../observability/frontEndObservers.js'

export interface ListenerOptions {
  /** What `GET /readyz` answers (admin/readiness.ts); without it, /readyz is routed as any path. */
  readonly readiness?: ReadinessProbe
}

export function startHttpServer(services: Services, port: number, host: string, observers: FrontEndObservers, options: ListenerOptions = {}): Promise<RunningServer> {
  const { config } = services
  const { readiness } = options
  const trustedProxies = new TrustedProxies(config.trustedProxies)
  return startListener(services, port, host, observers, (res, req, exchange, upgrade) => {
    const url = req.getUrl()
    const ready = readiness === undefined ? null : readinessAnswer(readiness, url, exchange.method)
    if (ready !== null) {
      send(res, exchange, observers, ready)
      return
    }
    const incoming = new IncomingRequest(req, url, res, exchange, observers, trustedProxies, upgrade)
    if (refusesBrokenHead(incoming)) return
    exchange.conventions = conventionsOf(config, incoming.headers)
    if (answersPreflight(incoming, config.corsOrigins)) return
    const address = addressOf(incoming, config.baseDomain)
    if (address === null) return
    serveAddressed(services, incoming, address, false)
  })
}
