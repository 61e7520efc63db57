/*
 * A cluster node's internal listener (ARCHITECTURE.md §8): the port the
 * other nodes forward a tenant's requests to (http/forwarding.ts), and where
 * the cluster's own calls between nodes arrive (releaseCall.ts,
 * restoreCall.ts, http/tenantWrites.ts). It is the API listener's router
 * behind other doors, a pipeline of the same steps (http/server.ts names
 * them) with these differences:
 *
 *   - no /readyz, no CORS preflight, and no CORS or compression: the node a
 *     request was forwarded from adds those, so answers go as they are;
 *   - each request is taken only with its own credential, derived from
 *     CLUSTER_SECRET (http/clusterCredentials.ts, http/internalAccess.ts):
 *     the node credential opens the cluster's calls under /cluster/ (run on
 *     their body: serveClusterCall), the forwarding credential the /v1
 *     routes of the one tenant the request was forwarded for; else 403 and
 *     the connection closed;
 *   - the client's address is the one the forwarding node reports
 *     (X-Forwarded-For), and the router is told the request was forwarded
 *     (it is answered here, never forwarded again).
 */
import { accessDenied, ApiError } from '../domain/errors.js'
import { refusesBrokenHead } from '../http/brokenHead.js'
import type { Services } from '../http/call.js'
import { TrustedProxies } from '../http/clientAddress.js'
import { clusterCredentials } from '../http/clusterCredentials.js'
import { serveAddressed } from '../http/dispatch.js'
import { FORWARDED_FOR_HEADER } from '../http/forwarding.js'
import { writeWhenReady } from '../http/handlerSafetyNet.js'
import { IncomingRequest } from '../http/incomingRequest.js'
import { internalAccess, reachesForwardedTenant } from '../http/internalAccess.js'
import { startListener, type RunningServer } from '../http/listener.js'
import { addressOf } from '../http/requestAddress.js'
import { readBody } from '../http/requestBody.js'
import { internalError, plainErrorResponse, type ApiResponse } from '../http/response.js'
import type { FrontEndObservers } from '../observability/frontEndObservers.js'

/**
 * The cluster's own calls between nodes, outside /v1 (releaseCall.ts, restoreCall.ts, http/tenantWrites.ts): for a
 * method and path that is one, the handler of its body; null: not one of them.
 */
type FindClusterCall = (method: string, path: string) => ((body: Buffer) => Promise<ApiResponse>) | null

export interface InternalListenerOptions {
  /** CLUSTER_SECRET. */
  readonly secret: string
  readonly clusterCall: FindClusterCall
}

export function startInternalListener(services: Services, port: number, host: string, observers: FrontEndObservers, options: InternalListenerOptions): Promise<RunningServer> {
  const { config } = services
  const credentials = clusterCredentials(options.secret)
  // Never asked on this listener (the forwarding node's X-Forwarded-For is the client's address), but the request reads it so.
  const trustedProxies = new TrustedProxies(config.trustedProxies)
  return startListener(services, port, host, observers, (res, req, exchange, upgrade) => {
    const incoming = new IncomingRequest(req, req.getUrl(), res, exchange, observers, trustedProxies, upgrade)
    if (refusesBrokenHead(incoming)) return
    const access = internalAccess(incoming.url, incoming.headers, credentials)
    if (access.kind === 'refused') {
      incoming.send(plainErrorResponse(accessDenied(access.reason)), true)
      return
    }
    if (access.kind === 'node') {
      serveClusterCall(incoming, options.clusterCall, config.maxBodyBytes)
      return
    }
    incoming.peer = incoming.headers.get(FORWARDED_FOR_HEADER) ?? ''
    const address = addressOf(incoming, config.baseDomain)
    if (address === null) return
    if (!reachesForwardedTenant(access, address.tenant, address.versioned)) {
      incoming.send(plainErrorResponse(accessDenied('a forwarded request reaches the /v1 routes of the tenant it was forwarded for only')), true)
      return
    }
    // It reaches its tenant's /v1 (above): of serveAddressed's steps, the docs page and the refusal outside /v1 pass it on.
    serveAddressed(services, incoming, address, true)
  })
}

/** A cluster call (node credential checked): its handler runs on the body (up to MAX_BODY_BYTES), or 404. */
function serveClusterCall(incoming: IncomingRequest, findCall: FindClusterCall, maxBodyBytes: number): void {
  const { exchange, url } = incoming
  const plainRefuse = (error: ApiError) => incoming.send(plainErrorResponse(error), true)
  const clusterCall = findCall(exchange.method, url)
  if (clusterCall === null) {
    plainRefuse(new ApiError('TL01-9003', `no cluster call ${exchange.method} ${url.slice(0, 100)}`))
    return
  }
  const failed = (error: unknown) => {
    console.error(`request ${exchange.requestId}: cluster call ${url} failed:`, error)
    plainRefuse(internalError(exchange.requestId))
  }
  const whole = (body: Buffer) => writeWhenReady(clusterCall(body), (response) => incoming.send(response), failed, 'cluster call', exchange.requestId)
  readBody(
    incoming,
    maxBodyBytes,
    () => plainRefuse(new ApiError('TL01-9006', `the body is larger than ${maxBodyBytes} bytes`)),
    whole,
    () => plainRefuse(internalError(exchange.requestId)),
  )
}
