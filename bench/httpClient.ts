/*
 * A small keep-alive HTTP client for the benchmark's setup and for the
 * single-connection measurements: every request goes to 127.0.0.1:<port>
 * with the tenant in the Host header (`<tenant>.localhost`), so no DNS is
 * involved, and comes back with its status, body, wall time in ms and the
 * server's own time from its `Server-Timing: app;dur=` header. One
 * BenchClient holds at most one socket (maxSockets 1), so requests issued
 * one after another reuse one connection and are never pipelined.
 */
import http from 'node:http'

export interface BenchResponse {
  status: number
  text: string
  // biome-ignore lint/suspicious/noExplicitAny: an answer's JSON, read freely by the benchmarks that check it
  json: any
  /** Wall time at the client: the server's time plus sending the answer. */
  ms: number
  /** The server's time from its Server-Timing header (request in to answer ready), or null without one. */
  serverMs: number | null
}

export interface BenchRequest {
  tenant?: string | null
  body?: string
  headers?: Record<string, string>
}

export function hostOf(tenant: string | null | undefined, port: number): string {
  return tenant === null || tenant === undefined ? `localhost:${port}` : `${tenant}.localhost:${port}`
}

/** `path?name=value&…` with every value percent-encoded. */
export function withQuery(path: string, query: Record<string, string | number>): string {
  const text = Object.entries(query)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .join('&')
  return text === '' ? path : `${path}?${text}`
}

/** The duration of the `app` metric of a Server-Timing header, in ms. */
function serverTimingMs(header: string | string[] | undefined): number | null {
  const match = header === undefined ? null : /(?:^|,)\s*app;dur=([\d.]+)/.exec(String(header))
  return match === null ? null : Number(match[1])
}

export class BenchClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

  constructor(readonly port: number) {}

  request(method: string, path: string, options: BenchRequest = {}): Promise<BenchResponse> {
    const body = options.body === undefined ? undefined : Buffer.from(options.body)
    const headers: Record<string, string> = {
      host: hostOf(options.tenant, this.port),
      ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(body.length) }),
      ...options.headers,
    }
    const started = performance.now()
    return new Promise((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port: this.port, method, path, headers, agent: this.agent }, (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => {
          const ms = performance.now() - started
          const text = Buffer.concat(chunks).toString('utf8')
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          resolve({ status: response.statusCode ?? 0, text, json, ms, serverMs: serverTimingMs(response.headers['server-timing']) })
        })
        response.on('error', reject)
      })
      request.setTimeout(120_000, () => request.destroy(new Error(`${method} ${path} timed out`)))
      request.on('error', reject)
      if (body !== undefined) request.write(body)
      request.end()
    })
  }

  /** Like request(), but throws unless the status is the expected one. */
  async expect(status: number, method: string, path: string, options: BenchRequest = {}): Promise<BenchResponse> {
    const response = await this.request(method, path, options)
    if (response.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${response.status} ${response.text.slice(0, 300)}`)
    return response
  }

  close(): void {
    this.agent.destroy()
  }
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
}
