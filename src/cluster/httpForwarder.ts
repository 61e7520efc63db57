/*
 * The forwarder of a cluster node (http/forwarding.ts): sends a request for
 * a tenant another node holds to that node's internal listener over
 * keep-alive connections (one agent per node URL, at most
 * MAX_SOCKETS_PER_NODE sockets each), with the cluster secret and the
 * client's address, and gives back the answer as it came: status, the
 * headers that describe the body, and the body. The hop's own headers
 * (connection, length, the answering node's request id and timing) are the
 * answering server's to write. A node that cannot be reached (it died and
 * its lease has not run out yet) is answered 503 with Retry-After
 * (TenantMoved): the client's retry reaches the tenant's next owner. The
 * named writes of public calls (http/tenantWrites.ts) go the same way.
 * An answer sent without a length (chunked: an export, streamedBody.ts) is
 * handed on as a streamed body, chunk by chunk at the client's pace, not
 * gathered whole first; if the node fails midway the client's connection
 * is cut (streamedAnswer.ts). An answer without a length that never ends
 * (the change feed as Server-Sent Events) goes the same way: each event is
 * handed on as it comes (the feed is never compressed, compression.ts), the
 * hop's idle limit FORWARD_TIMEOUT_MS is above the feed's keep-alive
 * interval, and the client going away ends the iteration, which destroys
 * the forwarded request (the holding node's subscription ends with it):
 * at the next chunk, so within one keep-alive interval of a quiet feed, as
 * on the holding node itself (streamedAnswer.ts pulls no chunk after the
 * client left, and a quiet source is only asked again when it yields). A
 * WebSocket upgrade of the change feed is proxied as a WebSocket of its own
 * (http/changes/forwardedWebSocket.ts).
 */
import http from 'node:http'
import { CLUSTER_SECRET_HEADER, FORWARDED_FOR_HEADER, type RequestForwarder } from '../http/forwarding.js'
import type { ApiRequest } from '../http/request.js'
import type { ApiResponse } from '../http/response.js'
import { forwardWebSocket } from '../http/changes/forwardedWebSocket.js'
import { StreamedBody, wholeBody } from '../http/streamedBody.js'
import { TenantMoved } from '../tenants/tenantErrors.js'

const MAX_SOCKETS_PER_NODE = 64
/** Longest a forwarded request may take (a long report included) before the client is answered 503. */
const FORWARD_TIMEOUT_MS = 60_000

/** Headers of a hop, never passed on (RFC 9110 §7.6.1), and those the answering server writes itself. */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'content-length',
  'date',
  'x-request-id',
  'server-timing',
  'x-content-type-options',
  'uwebsockets',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  CLUSTER_SECRET_HEADER,
  FORWARDED_FOR_HEADER,
])

/** What a forward sends of a request; its id goes along, so both nodes log the request under the same id. */
type Forwardable = Pick<ApiRequest, 'method' | 'target' | 'headers' | 'body' | 'tenant' | 'remoteAddress'> & { readonly requestId?: string }

export class HttpForwarder implements RequestForwarder {
  private readonly agents = new Map<string, http.Agent>()
  /** Requests forwarded since start, and those that found no node (/metrics). */
  forwards = 0
  failures = 0

  /** `maxBufferedBytes`: CHANGE_FEED_MAX_BUFFERED_BYTES, the limit of a forwarded feed's WebSocket too. */
  constructor(
    private readonly secret: string,
    private readonly maxBufferedBytes: number,
  ) {}

  forward(request: Forwardable, nodeUrl: string): Promise<ApiResponse> {
    this.forwards += 1
    const tenant = request.tenant ?? ''
    if (nodeUrl === '') return Promise.reject(new TenantMoved(tenant))
    const url = new URL(request.target, nodeUrl)
    const headers: Record<string, string> = {}
    for (const [name, value] of request.headers) if (!HOP_HEADERS.has(name)) headers[name] = value
    if (request.requestId !== undefined) headers['x-request-id'] = request.requestId
    headers[CLUSTER_SECRET_HEADER] = this.secret
    headers[FORWARDED_FOR_HEADER] = request.remoteAddress()
    if (request.headers.get('upgrade')?.toLowerCase() === 'websocket') {
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
      return forwardWebSocket(url.toString(), headers, this.maxBufferedBytes).catch((error: unknown) => {
        this.failures += 1
        console.error(`forwarding a change feed WebSocket of tenant '${tenant}' to ${nodeUrl} failed: ${error instanceof Error ? error.message : String(error)}`)
        throw new TenantMoved(tenant)
      })
    }
    headers['content-length'] = String(request.body.byteLength)
    return new Promise<ApiResponse>((resolve, reject) => {
      const fail = (error: Error): void => {
        this.failures += 1
        console.error(`forwarding a request of tenant '${tenant}' to ${nodeUrl} failed: ${error.message}`)
        reject(new TenantMoved(tenant))
      }
      const outgoing = http.request(url, { method: request.method, headers, agent: this.agentFor(nodeUrl), timeout: FORWARD_TIMEOUT_MS }, (incoming) => {
        if (incoming.headers['content-length'] === undefined && incoming.headers['transfer-encoding'] !== undefined) {
          incoming.on('error', (error) => console.error(`a streamed answer of tenant '${tenant}' from ${nodeUrl} broke off: ${error.message}`))
          resolve({ status: incoming.statusCode ?? 502, headers: answerHeaders(incoming), body: new StreamedBody(chunksOf(incoming), () => incoming.destroy()) })
          return
        }
        const chunks: Buffer[] = []
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
        incoming.on('error', fail)
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 502, headers: answerHeaders(incoming), body: Buffer.concat(chunks) }))
      })
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${FORWARD_TIMEOUT_MS} ms`)))
      outgoing.on('error', fail)
      outgoing.end(request.body)
    })
  }

  async writeElsewhere(nodeUrl: string, tenant: string, name: string, args: Record<string, unknown>): Promise<unknown> {
    const path = `/cluster/tenants/${encodeURIComponent(tenant)}/writes/${name}`
    const body = Buffer.from(JSON.stringify(args))
    const headers = new Map([['content-type', 'application/json']])
    const request = { method: 'POST', target: path, headers, body, tenant, remoteAddress: () => '' }
    const answer = await this.forward(request, nodeUrl)
    const text = (await wholeBody(answer.body)).toString('utf8')
    if (answer.status !== 200) throw new Error(`node ${nodeUrl} answered ${answer.status} to the write '${name}' of tenant '${tenant}': ${text}`)
    const { result, found } = JSON.parse(text) as { result: unknown; found: boolean }
    return found ? result : undefined
  }

  private agentFor(nodeUrl: string): http.Agent {
    let agent = this.agents.get(nodeUrl)
    if (agent === undefined) {
      agent = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_NODE })
      this.agents.set(nodeUrl, agent)
    }
    return agent
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy()
    this.agents.clear()
  }
}

/** The chunks of an answer as they arrive (ending the iteration early destroys the answer's stream). */
async function* chunksOf(incoming: http.IncomingMessage): AsyncGenerator<Buffer, void, undefined> {
  for await (const chunk of incoming) yield chunk as Buffer
}

function answerHeaders(incoming: http.IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue
    headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return headers
}
