/*
 * A request as a listener's steps see it (server.ts, and the cluster's
 * internal listener). uWS's request object dies with the handler, so
 * everything the steps need of it is read here at once, before the first
 * await: the path, the query (as received, and parsed: the query is read
 * first, so that an error found before routing is written in the format the
 * request asked for), and the headers (lower-cased, a field that must come
 * once counted: requestHeaders.ts). It carries the response and the exchange
 * (exchange.ts) it is answered on, so that a step either answers it (send,
 * refuse) or hands on what it found.
 *
 * The client's address is looked up once, when something asks for it
 * (ApiRequest.remoteAddress): the connection's peer, or what a trusted proxy
 * reports (clientAddress.ts); a listener that is told the address (the
 * internal one: the forwarding node's X-Forwarded-For) sets `peer` first.
 */
import type { ApiError } from '../domain/errors.js'
import type { FrontEndObservers } from '../observability/frontEndObservers.js'
import { send, type WebSocketUpgrade } from './answerWriter.js'
import { clientAddressOf, type TrustedProxies } from './clientAddress.js'
import type { Exchange } from './exchange.js'
import { parseQuery } from './request.js'
import { keepHeader, OnceFieldCounts } from './requestHeaders.js'
import { errorResponse, type ApiResponse, type RequestHead } from './response.js'
import type { HttpRequest, HttpResponse } from './uws.js'

export class IncomingRequest {
  /** The query as received, undecoded ('' for none). */
  readonly rawQuery: string
  readonly query: Map<string, string>
  readonly headers = new Map<string, string>()
  /** How often each field that must come once came (messageRules.ts). */
  readonly counts = new OnceFieldCounts()
  /** The client's address once looked up, or as the listener was told it. */
  peer: string | undefined = undefined

  constructor(
    req: HttpRequest,
    /** The path, without the query. */
    readonly url: string,
    readonly res: HttpResponse,
    readonly exchange: Exchange,
    readonly observers: FrontEndObservers,
    private readonly trustedProxies: TrustedProxies,
    /** The WebSocket upgrade the request asks for, on the change feed's route; undefined for any other. */
    readonly upgrade: WebSocketUpgrade | undefined,
  ) {
    this.rawQuery = req.getQuery() ?? ''
    const { headers, counts } = this
    req.forEach((name, value) => {
      keepHeader(headers, counts, name, value)
    })
    this.query = parseQuery(this.rawQuery)
  }

  /** The client's address, looked up on the first call; the response is still open then (after it, ''). */
  readonly remoteAddress = (): string => (this.peer ??= this.exchange.responseClosed ? '' : this.connectionAddress())

  /** Writes the answer (answerWriter.ts), closing the connection after it when `close`. */
  send(response: ApiResponse, close = false): void {
    send(this.res, this.exchange, this.observers, response, close)
  }

  /** Answers `error` in the format `head` asks for. */
  refuse(head: RequestHead, error: ApiError, close = false): void {
    this.send(errorResponse(head, error), close)
  }

  /** The request's head before its path is read: the query and headers, no JSONP suffix. */
  unsplitHead(): RequestHead {
    return { query: this.query, headers: this.headers, jsonpSuffix: false }
  }

  private connectionAddress(): string {
    const text = (address: ArrayBuffer) => Buffer.from(address).toString()
    return clientAddressOf(text(this.res.getRemoteAddressAsText()), text(this.res.getProxiedRemoteAddressAsText()), this.headers.get('x-forwarded-for'), this.trustedProxies)
  }
}
