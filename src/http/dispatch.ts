/*
 * The last steps of a listener's pipeline, once the request's address is
 * read (requestAddress.ts), the same on both listeners (serveAddressed): the
 * docs page or a refusal outside a tenant's /v1, the method override, the
 * body, then the request handed to the router (router.ts) as an ApiRequest, and what the
 * router answers written. A read that waits for nothing comes back as the
 * answer itself, not a promise (maybePromise.ts), and is written before the
 * handler returns. An answer that starts the change feed's WebSocket
 * upgrades the connection, when the request asked for one (else 400
 * TL01-9007). A promise that rejects (a bug outside the router) is answered
 * 500 naming the request (handlerSafetyNet.ts).
 */
import { ApiError } from '../domain/errors.js'
import { upgradeTo } from './answerWriter.js'
import type { Services } from './call.js'
import { writeWhenReady } from './handlerSafetyNet.js'
import type { IncomingRequest } from './incomingRequest.js'
import type { ApiRequest } from './request.js'
import { overriddenMethod } from './methodOverride.js'
import { answersDocsPage, reachesApi, type ApiAddress, type RequestAddress } from './requestAddress.js'
import { readRoutedBody } from './requestBody.js'
import { internalError, type ApiResponse, type WebSocketStart } from './response.js'
import { route } from './router.js'

/**
 * Serves the request at its address (the tenant it names recorded on the exchange): the docs page, a refusal outside
 * a tenant's /v1, or the router's answer once the body is read; `forwarded`: it came from another node.
 */
export function serveAddressed(services: Services, incoming: IncomingRequest, address: RequestAddress, forwarded: boolean): void {
  const { exchange } = incoming
  exchange.tenant = address.tenant ?? null
  if (answersDocsPage(incoming, address)) return
  if (!reachesApi(incoming, address)) return
  const method = overriddenMethod(exchange.method, incoming.query)
  exchange.method = method
  readRoutedBody(incoming, address, services.config, (body) => dispatch(services, incoming, address, method, body, forwarded))
}

/** Routes the request as `method` with its `body`; `forwarded`: it came from another node (the internal listener). */
function dispatch(services: Services, incoming: IncomingRequest, address: ApiAddress, method: string, body: Buffer, forwarded: boolean): void {
  const { exchange } = incoming
  const request: ApiRequest = {
    method,
    segments: address.segments,
    query: incoming.query,
    headers: incoming.headers,
    body,
    tenant: address.tenant,
    remoteAddress: incoming.remoteAddress,
    jsonpSuffix: address.jsonpSuffix,
    inBatch: false,
    requestId: exchange.requestId,
    addressPrefix: address.prefix,
    rawQuery: incoming.rawQuery,
    forwarded,
  }
  const answered = (response: ApiResponse) => (response.webSocket === undefined ? incoming.send(response) : upgrade(incoming, address, response.webSocket))
  // A read that waits for nothing is answered here, inside the handler (maybePromise.ts).
  const answer = route(services, request, undefined, exchange)
  if (!(answer instanceof Promise)) {
    answered(answer)
    return
  }
  writeWhenReady(
    answer,
    answered,
    (error) => {
      console.error(`request ${exchange.requestId}: unexpected failure outside the router:`, error)
      incoming.refuse(address, internalError(exchange.requestId))
    },
    'request',
    exchange.requestId,
  )
}

/** Upgrades to the change feed's WebSocket the request whose route answered with a start. */
function upgrade(incoming: IncomingRequest, address: ApiAddress, start: WebSocketStart): void {
  if (incoming.upgrade === undefined) {
    incoming.refuse(address, new ApiError('TL01-9007', 'a WebSocket is opened on GET /v1/changes only'))
    return
  }
  upgradeTo(incoming.res, incoming.exchange, incoming.observers, start, incoming.upgrade)
}
