/*
 * Clients of the change feed for tests: a WebSocket (the `ws` package:
 * Node 20 has no WebSocket client) and an EventSource (the `eventsource`
 * package, whose requests go through node:http here so that they carry the
 * tenant's Host header, which fetch does not let a caller set). Both
 * collect the events they get and say how the stream ended.
 */
import http from 'node:http'
import { Readable } from 'node:stream'
import { EventSource } from 'eventsource'
import WebSocket from 'ws'

export interface FeedEvent {
  seq: number
  op: number
  at: string
  resource: string
  type: string
  id: string
  kind: string
  version: number | null
  object: Record<string, unknown> | null
}

export interface FeedClient {
  readonly events: FeedEvent[]
  /** Resolves with the close code and reason once the stream ended. */
  readonly closed: Promise<{ code: number; reason: string }>
  /** Resolves once `count` events arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<FeedEvent[]>
  close(): void
}

function feedQuery(token: string, query: Record<string, string>): string {
  return new URLSearchParams({ token, ...query }).toString()
}

function waiter(events: FeedEvent[]): { notify(): void; waitFor(count: number, timeoutMs?: number): Promise<FeedEvent[]> } {
  const waiting = new Set<() => void>()
  return {
    notify: () => {
      for (const check of [...waiting]) check()
    },
    waitFor: (count, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (events.length < count) return
          waiting.delete(check)
          clearTimeout(timer)
          resolve(events)
        }
        const timer = setTimeout(() => {
          waiting.delete(check)
          reject(new Error(`${events.length} of ${count} events after ${timeoutMs} ms`))
        }, timeoutMs)
        waiting.add(check)
        check()
      }),
  }
}

/** Opens the feed as a WebSocket; rejects with the HTTP status, body and headers when the server refuses the upgrade. */
export function openWebSocketFeed(port: number, tenant: string, token: string, query: Record<string, string> = {}, options: { paused?: boolean } = {}): Promise<FeedClient & { socket: WebSocket }> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/changes?${feedQuery(token, query)}`, { headers: { host: `${tenant}.localhost` } })
  const events: FeedEvent[] = []
  const { notify, waitFor } = waiter(events)
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  socket.on('message', (data) => {
    events.push(JSON.parse(data.toString()) as FeedEvent)
    notify()
  })
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      if (options.paused === true) socket.pause()
      resolve({ events, closed, waitFor, close: () => socket.close(), socket })
    })
    socket.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () =>
        reject(Object.assign(new Error(`upgrade refused: ${response.statusCode}`), { status: response.statusCode, body: Buffer.concat(chunks).toString(), headers: response.headers })),
      )
    })
    socket.once('error', reject)
  })
}

/** fetch for EventSource over node:http, with the tenant's Host header. */
function hostFetch(tenant: string): typeof fetch {
  return ((input: string | URL, init?: RequestInit) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input))
      const headers: Record<string, string> = { host: `${tenant}.localhost` }
      new Headers(init?.headers).forEach((value, name) => {
        headers[name] = value
      })
      const request = http.request({ host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: 'GET', headers, agent: false }, (response) => {
        const responseHeaders = new Headers()
        for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') responseHeaders.set(name, value)
        resolve(new Response(Readable.toWeb(response) as ReadableStream, { status: response.statusCode ?? 0, headers: responseHeaders }))
      })
      init?.signal?.addEventListener('abort', () => request.destroy())
      request.on('error', reject)
      request.end()
    })) as typeof fetch
}

/** Opens the feed as Server-Sent Events. EventSource reconnects by itself (sending Last-Event-ID) unless closed. */
export function openEventSourceFeed(port: number, tenant: string, token: string, query: Record<string, string> = {}): Promise<FeedClient & { source: EventSource }> {
  const source = new EventSource(`http://127.0.0.1:${port}/v1/changes?${feedQuery(token, query)}`, { fetch: hostFetch(tenant) })
  const events: FeedEvent[] = []
  const { notify, waitFor } = waiter(events)
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    source.addEventListener('end', (message) => {
      source.close()
      resolve(JSON.parse((message as MessageEvent<string>).data) as { code: number; reason: string })
    }),
  )
  source.addEventListener('change', (message) => {
    events.push(JSON.parse((message as MessageEvent<string>).data) as FeedEvent)
    notify()
  })
  return new Promise((resolve, reject) => {
    source.onopen = () => resolve({ events, closed, waitFor, close: () => source.close(), source })
    source.onerror = (error) => {
      if (source.readyState === EventSource.CLOSED)
        reject(Object.assign(new Error(`event stream refused: ${String((error as { code?: number }).code)}`), { status: (error as { code?: number }).code }))
    }
  })
}
