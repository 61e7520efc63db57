/*
 * A tenant-and-token bound view of the test client for the resource tests:
 * `/v1/` is prefixed, the token goes in the query, and `create` / `ids`
 * shorten the common steps (a failed create throws with the answer).
 */
import type { AnswerJson, TestClient, TestResponse } from './http.js'

export type Query = Record<string, string | number | boolean>

export interface Api {
  readonly token: string
  call(method: string, path: string, options?: { query?: Query; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<TestResponse>
  get(path: string, query?: Query): Promise<TestResponse>
  post(path: string, body?: unknown, query?: Query): Promise<TestResponse>
  put(path: string, body: unknown, query?: Query): Promise<TestResponse>
  del(path: string, query?: Query): Promise<TestResponse>
  /** POSTs and returns the new id; throws unless 201. */
  create(path: string, body: unknown): Promise<string>
  /** The ids of a list, sorted. */
  ids(path: string, query?: Query): Promise<string[]>
}

export function api(client: TestClient, tenant: string, token: string): Api {
  const call: Api['call'] = (method, path, options = {}) =>
    client.request(method, `/v1/${path}`, { tenant, query: { token, ...options.query }, body: options.body, rawBody: options.rawBody, headers: options.headers })
  const self: Api = {
    token,
    call,
    get: (path, query = {}) => call('GET', path, { query }),
    post: (path, body, query = {}) => call('POST', path, { body, query }),
    put: (path, body, query = {}) => call('PUT', path, { body, query }),
    del: (path, query = {}) => call('DELETE', path, { query }),
    async create(path, body) {
      const created = await self.post(path, body)
      if (created.status !== 201) throw new Error(`POST ${path} failed: ${created.status} ${created.text}`)
      return created.json.id as string
    },
    async ids(path, query = {}) {
      const listed = await self.get(path, query)
      if (listed.status !== 200 || !Array.isArray(listed.json)) throw new Error(`GET ${path} failed: ${listed.status} ${listed.text}`)
      return (listed.json as { id: string }[]).map((rec) => rec.id).sort()
    },
  }
  return self
}

/** A user made by `creator` over HTTP (a superuser's users are confirmed at once), logged in. */
export async function newUser(client: TestClient, tenant: string, creator: Api, name: string, extra: Record<string, unknown> = {}): Promise<{ id: string; api: Api }> {
  const email = `${name.toLowerCase()}@${tenant}.test`
  const password = 'user-password'
  const id = await creator.create('users', { firstName: name, lastName: 'Tester', email, password, ...extra })
  const token = await client.login(tenant, email, password)
  return { id, api: api(client, tenant, token) }
}

export const ref = (id: string) => ({ id })

export const sorted = (ids: string[]) => [...ids].sort()

type StrictQuery = Record<string, string | number | boolean>

/**
 * Calls that answer the body's JSON and throw unless the status is the expected one (201 for POST, 200
 * otherwise), for tests whose set-up must not fail quietly; POST and PUT answer the whole object, PUT
 * ignores versions.
 */
export interface StrictCalls {
  post(path: string, body: unknown, query?: StrictQuery): Promise<AnswerJson>
  get(path: string, query?: StrictQuery): Promise<AnswerJson>
  put(path: string, body: unknown, query?: StrictQuery): Promise<AnswerJson>
}

export function strictCalls(client: TestClient, tenant: string, token: string): StrictCalls {
  const expect = async (method: string, path: string, status: number, query: StrictQuery, body?: unknown) => {
    const response = await client.request(method, `/v1/${path}`, { tenant, query: { token, ...query }, body })
    if (response.status !== status) throw new Error(`${method} ${path}: ${response.status} ${response.text}`)
    return response.json
  }
  return {
    post: (path, body, query = {}) => expect('POST', path, 201, { response_object: true, ...query }, body),
    get: (path, query = {}) => expect('GET', path, 200, query),
    put: (path, body, query = {}) => expect('PUT', path, 200, { version_ignore: true, response_object: true, ...query }, body),
  }
}
