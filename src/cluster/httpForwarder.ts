/*
 * The forwarder of a cluster node (http/forwarding.ts): sends a request for
 * a tenant another node holds to that node's internal listener over
 * keep-alive connections (one agent per node URL, at most
 * MAX_SOCKETS_PER_NODE sockets each), and gives back the answer as it came: status, the
 * headers that describe the body, and the body. The hop's own headers
 * (connection, length, the answering node's request id and timing) are the
 * answering server's to write. A node that cannot be reached (it died and
 * its lease has not run out yet) is answered 503 with Retry-After
 * (TenantMoved): the client's retry reaches the tenant's next owner.
 *
 * What is sent is the request as this node understood it, never the
 * client's raw target: the address prefix, `/v1` and the segments the
 * router split, each encoded again, and the query
 * (http/requestTarget.ts). It carries the forwarding credential and names
 * its tenant (http/clusterCredentials.ts), which open that tenant's /v1
 * routes on the other node and nothing else; the client's address goes in
 * X-Forwarded-For. The named writes of public calls (http/tenantWrites.ts)
 * are the cluster's own calls: they carry the node credential instead,
 * which no forwarded request ever does.
 * An answer sent without a length (chunked: an export, streamedBody.ts) is
 * handed on as a streamed body, chunk by chunk at the client's pace, not
 * gathered whole first; if the node fails midway the client's connection
 * is cut (streamedAnswer.ts). An answer without a length that never ends
 * (the change feed as Server-Sent Events) goes the same way: each event is
 * handed on as it comes (the feed is never compressed, compression.ts), the
 * hop's idle limit FORWARD_TIMEOUT_MS is above the feed's keep-alive
 * interval, and the client going away ends the iteration, which destroys
 * the forwarded request (the holding node's subscription ends with it),
 * at once even on a quiet feed (the body's `clientGone`, streamedBody.ts). A
 * WebSocket upgrade of the change feed is proxied as a WebSocket of its own
 * (http/changes/forwardedWebSocket.ts).
 */
import http from 'node:http'
import { clusterCredentials, FORWARDED_CREDENTIAL_HEADER, FORWARDED_TENANT_HEADER, NODE_CREDENTIAL_HEADER, type ClusterCredentials } from '../http/clusterCredentials.js'
import { FORWARDED_FOR_HEADER, type RequestForwarder } from '../http/forwarding.js'
import { forwardTarget } from '../http/requestTarget.js'
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
  FORWARDED_CREDENTIAL_HEADER,
  FORWARDED_TENANT_HEADER,
  NODE_CREDENTIAL_HEADER,
  FORWARDED_FOR_HEADER,
])

/** What a forward sends of a request; its id goes along, so both nodes log the request under the same id. */
type Forwardable = Pick<ApiRequest, 'method' | 'addressPrefix' | 'segments' | 'jsonpSuffix' | 'query' | 'rawQuery' | 'headers' | 'body' | 'tenant' | 'remoteAddress'> & {
  readonly requestId?: string
}

export class HttpForwarder implements RequestForwarder {
  private readonly agents = new Map<string, http.Agent>()
  /** Requests forwarded since start, and those that found no node (/metrics). */
  forwards = 0
  failures = 0

  private readonly credentials: ClusterCredentials

  /** `secret`: CLUSTER_SECRET; `maxBufferedBytes`: CHANGE_FEED_MAX_BUFFERED_BYTES, the limit of a forwarded feed's WebSocket too. */
  constructor(
    secret: string,
    private readonly maxBufferedBytes: number,
  ) {
    this.credentials = clusterCredentials(secret)
  }

  forward(request: Forwardable, nodeUrl: string): Promise<ApiResponse> {
    this.forwards += 1
    const tenant = request.tenant
    if (nodeUrl === '' || tenant === null) return Promise.reject(new TenantMoved(tenant ?? ''))
    const target = forwardTarget(request)
    const headers: Record<string, string> = {}
    for (const [name, value] of request.headers) if (!HOP_HEADERS.has(name)) headers[name] = value
    if (request.requestId !== undefined) headers['x-request-id'] = request.requestId
    headers[FORWARDED_CREDENTIAL_HEADER] = this.credentials.forwarded
    headers[FORWARDED_TENANT_HEADER] = tenant
    headers[FORWARDED_FOR_HEADER] = request.remoteAddress()
    if (request.headers.get('upgrade')?.toLowerCase() === 'websocket') {
      const node = new URL(nodeUrl)
      const url = `${node.protocol === 'https:' ? 'wss:' : 'ws:'}//${node.host}${target}`
      return forwardWebSocket(url, headers, this.maxBufferedBytes).catch((error: unknown) => {
        this.failures += 1
        console.error(`forwarding a change feed WebSocket of tenant '${tenant}' to ${nodeUrl} failed: ${error instanceof Error ? error.message : String(error)}`)
        throw new TenantMoved(tenant)
      })
    }
    return this.send(nodeUrl, request.method, target, headers, request.body, tenant)
  }

  async writeElsewhere(nodeUrl: string, tenant: string, name: string, args: Record<string, unknown>): Promise<unknown> {
    this.forwards += 1
    const path = `/cluster/tenants/${encodeURIComponent(tenant)}/writes/${encodeURIComponent(name)}`
    const headers = { 'content-type': 'application/json', [NODE_CREDENTIAL_HEADER]: this.credentials.node }
    const answer = await this.send(nodeUrl, 'POST', path, headers, Buffer.from(JSON.stringify(args)), tenant)
    const text = (await wholeBody(answer.body)).toString('utf8')
    if (answer.status !== 200) throw new Error(`node ${nodeUrl} answered ${answer.status} to the write '${name}' of tenant '${tenant}': ${text}`)
    const { result, found } = JSON.parse(text) as { result: unknown; found: boolean }
    return found ? result : undefined
  }

  /**
   * Sends one request to the node's internal listener at exactly `path` (already encoded: no URL is resolved against
   * another, so nothing in it is read as `..` or a separator) and resolves with its answer.
   */
  private send(nodeUrl: string, method: string, path: string, headers: Record<string, string>, body: Buffer, tenant: string): Promise<ApiResponse> {
    const node = new URL(nodeUrl)
    headers['content-length'] = String(body.byteLength)
    return new Promise<ApiResponse>((resolve, reject) => {
      const fail = (error: Error): void => {
        this.failures += 1
        console.error(`forwarding a request of tenant '${tenant}' to ${nodeUrl} failed: ${error.message}`)
        reject(new TenantMoved(tenant))
      }
      const target = { protocol: node.protocol, hostname: node.hostname.replace(/^\[|\]$/g, ''), port: node.port, path }
      const options = { ...target, method, headers, agent: this.agentFor(nodeUrl), timeout: FORWARD_TIMEOUT_MS }
      const outgoing = http.request(options, (incoming) => {
        if (incoming.headers['content-length'] === undefined && incoming.headers['transfer-encoding'] !== undefined) {
          incoming.on('error', (error) => console.error(`a streamed answer of tenant '${tenant}' from ${nodeUrl} broke off: ${error.message}`))
          resolve({
            status: incoming.statusCode ?? 502,
            headers: answerHeaders(incoming),
            body: new StreamedBody(
              chunksOf(incoming),
              () => incoming.destroy(),
              () => incoming.destroy(),
            ),
          })
          return
        }
        const chunks: Buffer[] = []
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
        incoming.on('error', fail)
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 502, headers: answerHeaders(incoming), body: Buffer.concat(chunks) }))
      })
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${FORWARD_TIMEOUT_MS} ms`)))
      outgoing.on('error', fail)
      outgoing.end(body)
    })
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
