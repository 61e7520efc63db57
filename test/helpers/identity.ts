/*
 * Shared pieces of the identity tests: Basic headers, full login answers,
 * error-body checks and the date format of token expirations.
 */
import http from 'node:http'
import type { Test } from 'tap'
import type { AnswerJson, TestClient, TestResponse } from './http.js'
import { TEST_API_KEY } from './server.js'

export function basic(user: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` }
}

export function loginRaw(client: TestClient, tenant: string, user: string, password: string): Promise<TestResponse> {
  return client.request('GET', '/v1/auth/login', { tenant, query: { apikey: client.apiKey }, headers: basic(user, password) })
}

export function refreshRaw(client: TestClient, tenant: string, refreshToken: string): Promise<TestResponse> {
  return client.request('GET', '/v1/auth/refreshtoken', { tenant, query: { apikey: client.apiKey, refresh_token: refreshToken } })
}

/** GET users/@self with a token: 200 while the token works. */
export function whoAmI(client: TestClient, tenant: string, token: string): Promise<TestResponse> {
  return client.request('GET', '/v1/users/@self', { tenant, query: { token } })
}

export function expectError(t: Test, response: TestResponse, status: number, code: string, label = ''): void {
  t.equal(response.status, status, `${label} status ${status}`.trim())
  t.equal(response.json?.code, code, `${label} code ${code}`.trim())
}

/** Milliseconds of a `/Date(ms)/` text. */
export function dateMs(text: unknown): number {
  const match = /^\/Date\((-?\d+)\)\/$/.exec(String(text))
  if (match === null) throw new Error(`not a date: ${String(text)}`)
  return Number(match[1])
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface LoginFromAnswer {
  status: number
  headers: http.IncomingHttpHeaders
  json: AnswerJson
}

/** A login from a chosen loopback address (Linux routes all of 127/8 to lo), on a connection of its own. */
export function loginFrom(port: number, localAddress: string, tenant: string, user: string, password: string): Promise<LoginFromAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, localAddress, method: 'GET', path: `/v1/auth/login?apikey=${TEST_API_KEY}`, headers: { host: `${tenant}.localhost`, ...basic(user, password) }, agent: false },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }))
      },
    )
    request.on('error', reject)
    request.end()
  })
}
