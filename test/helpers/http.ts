/*
 * A small HTTP client for tests: every request names its tenant, which
 * becomes the Host header (`<tenant>.localhost`), so tests need no DNS.
 */
import http from 'node:http'

export interface TestResponse {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
  body: Buffer
  json: AnswerJson
}

/**
 * The JSON of an answer as the tests read it: whatever the server sent, read field by field by the assertions that
 * check it (t.same, t.match, t.equal), so the tests name no type for every answer they probe.
 */
// biome-ignore lint/suspicious/noExplicitAny: an answer's JSON is read freely by the tests, and their assertions check it
export type AnswerJson = any

export interface RequestOptions {
  tenant?: string | null
  query?: Record<string, string | number | boolean>
  body?: unknown
  rawBody?: string | Buffer
  headers?: Record<string, string>
  timeoutMs?: number
}

export class TestClient {
  constructor(
    readonly port: number,
    readonly apiKey = 'test-api-key',
  ) {}

  request(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
    const query = new URLSearchParams()
    for (const [key, value] of Object.entries(options.query ?? {})) query.set(key, String(value))
    const queryText = query.toString()
    const payload = options.rawBody !== undefined ? Buffer.from(options.rawBody) : options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body))
    const headers: Record<string, string> = {
      host: options.tenant === null || options.tenant === undefined ? 'localhost' : `${options.tenant}.localhost`,
      ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(payload.length) }),
      ...options.headers,
    }
    return new Promise((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port: this.port, method, path: `${path}${queryText === '' ? '' : `?${queryText}`}`, headers, agent: false }, (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => {
          const body = Buffer.concat(chunks)
          const text = body.toString('utf8')
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body, json })
        })
        response.on('error', reject)
      })
      request.setTimeout(options.timeoutMs ?? 30_000, () => request.destroy(new Error(`${method} ${path} timed out`)))
      request.on('error', reject)
      if (payload !== undefined) request.write(payload)
      request.end()
    })
  }

  /** Signs a tenant up, confirms it and logs the owner in; returns the token. */
  async createTenant(tenant: string, email = `owner@${tenant}.test`, password = 'secret-password'): Promise<{ token: string; accountId: string; email: string; password: string }> {
    const signup = await this.request('POST', '/v1/register/signup', {
      query: { apikey: this.apiKey },
      body: { account: { name: `${tenant} Ltd`, urlPrefix: tenant }, owner: { firstName: 'Olive', lastName: 'Owner', email, password } },
    })
    if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${signup.text}`)
    const accountId = signup.json.id as string
    const confirm = await this.request('POST', `/v1/auth/confirm/${accountId}`, { tenant, query: { apikey: this.apiKey } })
    if (confirm.status !== 200) throw new Error(`confirm failed: ${confirm.status} ${confirm.text}`)
    const token = await this.login(tenant, email, password)
    return { token, accountId, email, password }
  }

  async login(tenant: string, user: string, password: string): Promise<string> {
    const login = await this.request('GET', '/v1/auth/login', {
      tenant,
      query: { apikey: this.apiKey },
      headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    })
    if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`)
    return login.json.token as string
  }
}
