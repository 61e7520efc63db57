/*
 * The mixed workload: many tenants at once, 90% reads and 10% writes.
 *
 * Setup (over HTTP, like real customers): each small tenant signs up,
 * confirms, logs in, and one batch creates its 5 projects and 95 time
 * records. Then a fixed deck of prepared requests is dealt: per tenant 9
 * reads (3 × GET a project, 3 × a list of 20 time records of a project by
 * start desc, 3 × GET /users/@self) and 1 POST of a time record; each
 * request of the load picks a card from the deck at random, so tenants,
 * paths and the read/write mix vary request by request.
 *
 * With wrk the deck is a Lua table in a generated script whose request()
 * returns a random pre-formatted request (the Host header names the tenant);
 * with autocannon a setupRequest hook does the same. Never pipelined.
 */
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { basicAuth, hostOf, withQuery, type BenchClient } from './httpClient.js'
import { parseWrk, type LoadResult, type LoadTool } from './loadgen.js'
import { timeRecordBody } from './scenarios.js'
import { BENCH_API_KEY } from './serverProcess.js'

export interface SmallTenant {
  tenant: string
  token: string
  projectIds: string[]
}

export interface PreparedRequest {
  method: string
  path: string
  host: string
  body?: string
}

const PROJECTS_PER_TENANT = 5
const RECORDS_PER_TENANT = 95

/** Signs up `tenant` over HTTP (owner@<tenant>.test, password bench-password), confirms it and logs in; the token. */
export async function signUpAndLogin(client: BenchClient, tenant: string): Promise<string> {
  const email = `owner@${tenant}.test`
  const password = 'bench-password'
  const signup = await client.expect(201, 'POST', withQuery('/v1/register/signup', { apikey: BENCH_API_KEY }), {
    body: JSON.stringify({ account: { name: `${tenant} Ltd`, urlPrefix: tenant }, owner: { firstName: 'Mia', lastName: 'Mixed', email, password } }),
  })
  await client.expect(200, 'POST', withQuery(`/v1/auth/confirm/${signup.json.id as string}`, { apikey: BENCH_API_KEY }), { tenant })
  const login = await client.expect(200, 'GET', withQuery('/v1/auth/login', { apikey: BENCH_API_KEY }), { tenant, headers: { authorization: basicAuth(email, password) } })
  return login.json.token as string
}

/** One batch: the tenant's projects (ids chosen here) and time records on them. */
async function fillTenant(client: BenchClient, tenant: string, token: string): Promise<string[]> {
  const projectIds = Array.from({ length: PROJECTS_PER_TENANT }, () => randomUUID())
  const items = [
    ...projectIds.map((id, index) => ({ id: `p${index}`, method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ id, name: `Project ${index}` }) })),
    ...Array.from({ length: RECORDS_PER_TENANT }, (_, index) => ({
      id: `r${index}`,
      method: 'POST',
      path: '/v1/time/timerecords',
      body: timeRecordBody(projectIds[index % PROJECTS_PER_TENANT] as string, index),
    })),
  ]
  const response = await client.expect(200, 'POST', withQuery('/v1/batch', { token }), { tenant, body: JSON.stringify(items) })
  const failed = (response.json as { id: string; code: number }[]).filter((answer) => answer.code >= 300)
  if (failed.length > 0) throw new Error(`batch setup of ${tenant}: ${failed.length} items failed, e.g. ${JSON.stringify(failed[0])}`)
  return projectIds
}

/** Signs up `count` tenants (mix-0 … mix-<count-1>) and fills each with a little data. */
export async function createSmallTenants(client: BenchClient, count: number): Promise<SmallTenant[]> {
  const tenants: SmallTenant[] = []
  for (let index = 0; index < count; index += 1) {
    const tenant = `mix-${index}`
    const token = await signUpAndLogin(client, tenant)
    tenants.push({ tenant, token, projectIds: await fillTenant(client, tenant, token) })
  }
  return tenants
}

/** Per tenant: 9 reads and 1 write. */
export function mixedDeck(tenants: readonly SmallTenant[], port: number): PreparedRequest[] {
  const deck: PreparedRequest[] = []
  for (const { tenant, token, projectIds } of tenants) {
    const host = hostOf(tenant, port)
    for (let index = 0; index < 3; index += 1) {
      const projectId = projectIds[index % projectIds.length] as string
      deck.push({ method: 'GET', host, path: withQuery(`/v1/time/projects/${projectId}`, { token }) })
      deck.push({ method: 'GET', host, path: withQuery('/v1/time/timerecords', { $filter: `project/id eq '${projectId}'`, $orderby: 'start desc', $top: 20, token }) })
      deck.push({ method: 'GET', host, path: withQuery('/v1/users/@self', { token }) })
    }
    deck.push({ method: 'POST', host, path: withQuery('/v1/time/timerecords', { token }), body: timeRecordBody(projectIds[0] as string, deck.length) })
  }
  return deck
}

// ---------------------------------------------------------------- wrk

/** A Lua string literal (bytes outside printable ASCII, quotes and backslashes as \ddd). */
function luaString(text: string): string {
  let out = '"'
  for (const byte of Buffer.from(text, 'utf8')) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`
  }
  return `${out}"`
}

function luaRequest(card: PreparedRequest): string {
  const headers = [`["Host"] = ${luaString(card.host)}`]
  if (card.body !== undefined) headers.push(`["Content-Type"] = "application/json"`)
  const body = card.body === undefined ? 'nil' : luaString(card.body)
  return `  wrk.format(${luaString(card.method)}, ${luaString(card.path)}, { ${headers.join(', ')} }, ${body}),`
}

export function wrkDeckScript(deck: readonly PreparedRequest[]): string {
  return [
    'local deck = nil',
    'init = function(args)',
    '  math.randomseed(os.time())',
    '  deck = {',
    ...deck.map((card) => `  ${luaRequest(card)}`),
    '  }',
    'end',
    'request = function()',
    '  return deck[math.random(#deck)]',
    'end',
    '',
  ].join('\n')
}

async function runWrkDeck(port: number, deck: readonly PreparedRequest[], connections: number, durationSeconds: number): Promise<LoadResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-wrk-mixed-'))
  try {
    const script = path.join(dir, 'mixed.lua')
    fs.writeFileSync(script, wrkDeckScript(deck))
    const args = ['-t1', `-c${connections}`, `-d${durationSeconds}s`, '--latency', '-s', script, `http://127.0.0.1:${port}/`]
    const { stdout, stderr } = await promisify(execFile)('wrk', args, { timeout: (durationSeconds + 30) * 1000 })
    if (stderr.trim() !== '') throw new Error(`wrk: ${stderr.trim()}`)
    return parseWrk(stdout)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------- autocannon

interface AutocannonInstance extends PromiseLike<{ requests: { total: number }; duration: number; errors: number; non2xx: number }> {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): void
}

async function runAutocannonDeck(port: number, deck: readonly PreparedRequest[], connections: number, durationSeconds: number): Promise<LoadResult> {
  const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => AutocannonInstance
  const pickCard = (request: Record<string, unknown>) => {
    const card = deck[Math.floor(Math.random() * deck.length)] as PreparedRequest
    const headers = { host: card.host, ...(card.body === undefined ? {} : { 'content-type': 'application/json' }) }
    return { ...request, method: card.method, path: card.path, headers, body: card.body }
  }
  const instance = autocannon({ url: `http://127.0.0.1:${port}`, connections, duration: durationSeconds, pipelining: 1, requests: [{ setupRequest: pickCard }] })
  const latencies: number[] = []
  instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms))
  const result = await instance
  const sorted = Float64Array.from(latencies).sort()
  const percentile = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
  return {
    tool: 'autocannon',
    requestsPerSecond: result.requests.total / result.duration,
    requests: result.requests.total,
    p50Ms: percentile(50),
    p99Ms: percentile(99),
    errors: result.errors,
    non2xx: result.non2xx,
  }
}

export function runDeck(tool: LoadTool, port: number, deck: readonly PreparedRequest[], connections: number, durationSeconds: number): Promise<LoadResult> {
  return tool === 'wrk' ? runWrkDeck(port, deck, connections, durationSeconds) : runAutocannonDeck(port, deck, connections, durationSeconds)
}
