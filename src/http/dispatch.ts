/*
 * The last step of a listener's pipeline: the request, its address and
 * body read, handed to the router (router.ts) as an ApiRequest, and what the
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
import type { ApiAddress } from './requestAddress.js'
import { internalError, type ApiResponse, type WebSocketStart } from './response.js'
import { route } from './router.js'

/** Routes the request as `method` with its `body`; `forwarded`: it came from another node (the internal listener). */
export function dispatch(services: Services, incoming: IncomingRequest, address: ApiAddress, method: string, body: Buffer, forwarded: boolean): void {
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
