/*
 * The load scenarios against the real server on the generated tenant. Each
 * scenario is one request shape: method, path (with the token as the
 * `token` query parameter), Host header naming the tenant, and for writes a
 * body — a fixed one for wrk (ids are made by the server, so every POST
 * still creates a new record) or a fresh one per request for autocannon.
 * `kind` says which raw-stack baseline a scenario is read against: reads →
 * bare uWS GET, writes → one flushed LMDB put per POST. Writes are never
 * pipelined (a reply waits for the log flush; see loadgen.ts).
 *
 * The mixed workload over 100 tenants is built in mixedLoad.ts.
 */
import type { FixtureInfo, FixtureProject } from './fixture.js'
import { basicAuth, BenchClient, hostOf, withQuery } from './httpClient.js'
import type { LoadOptions, LoadTool } from './loadgen.js'
import { BENCH_API_KEY } from './serverProcess.js'

export type ScenarioKind = 'read' | 'write'

/** Logs the fixture's owner in (the first request activates the tenant): the token for the scenarios, and how long it took. */
export async function ownerLogin(client: BenchClient, fixture: FixtureInfo): Promise<{ token: string; ms: number }> {
  const response = await client.expect(200, 'GET', withQuery('/v1/auth/login', { apikey: BENCH_API_KEY }), {
    tenant: fixture.tenant,
    headers: { authorization: basicAuth(fixture.ownerEmail, fixture.ownerPassword) },
  })
  return { token: response.json.token as string, ms: response.ms }
}

export interface ScenarioContext {
  port: number
  token: string
  fixture: FixtureInfo
  /** The project the list, count and POST scenarios use. */
  project: FixtureProject
  /** First day of the month the report scenario covers, yyyy-MM-dd. */
  reportMonth: string
}

export interface ScenarioRequest {
  method: string
  path: string
  headers: Record<string, string>
  body?: string
  /** A fresh body per request (autocannon only). */
  bodies?: () => string
  expectStatus: number
}

export interface Scenario {
  name: string
  description: string
  kind: ScenarioKind
  /**
   * Fewer connections than the run's, for requests that take tens of ms of
   * server CPU each (login: Argon2id; batch: 100 items): with 50 of them queued
   * the wait passes wrk's 2 s timeout and the figures lose those requests.
   */
  maxConnections?: number
  /**
   * The answer is far larger than bare-get's fixed body: the runner also
   * measures bare uWS answering this scenario's own bytes (same-bytes
   * baseline), the ceiling for an answer of that size on this machine.
   */
  largeAnswer?: true
  request(context: ScenarioContext): ScenarioRequest
}

const DAY_MS = 86_400_000
/**
 * The project the list, count and POST scenarios use: the one with the
 * median number of time records (about 2,000 of 1,000,000), a typical
 * project rather than a best or worst case for the planner.
 */
export function typicalProject(fixture: FixtureInfo): FixtureProject {
  const sorted = [...fixture.projects].sort((a, b) => a.records - b.records)
  return sorted[sorted.length >> 1] as FixtureProject
}

/** The last full month of the data, yyyy-MM-01. */
export function lastMonthOfData(fixture: FixtureInfo): string {
  const last = new Date(fixture.dataToMs - 1)
  return `${last.getUTCFullYear()}-${String(last.getUTCMonth() + 1).padStart(2, '0')}-01`
}

export function scenarioContext(port: number, token: string, fixture: FixtureInfo): ScenarioContext {
  return { port, token, fixture, project: typicalProject(fixture), reportMonth: lastMonthOfData(fixture) }
}

function tenantHeaders(context: ScenarioContext, json = false): Record<string, string> {
  return { Host: hostOf(context.fixture.tenant, context.port), ...(json ? { 'Content-Type': 'application/json' } : {}) }
}

/** A time record body on the project, at a pseudo-random working hour in the data's last year. */
export function timeRecordBody(projectId: string, seed = 0): string {
  const day = Date.UTC(2025, 0, 1) + (seed % 365) * DAY_MS
  const start = day + (8 + (seed % 9)) * 3_600_000
  return JSON.stringify({
    project: { id: projectId },
    start: new Date(start).toISOString(),
    stop: new Date(start + 5_400_000).toISOString(),
    duration: 5_400_000,
    description: `Benchmark entry ${seed}`,
    billable: true,
  })
}

function freshBodies(projectId: string): () => string {
  let seed = 0
  return () => {
    seed += 1
    return timeRecordBody(projectId, seed)
  }
}

export function listQuery(context: ScenarioContext, extra: Record<string, string | number> = {}): Record<string, string | number> {
  return { $filter: `project/id eq '${context.project.id}'`, $orderby: 'start desc', $top: 100, ...extra, token: context.token }
}

function batchBody(projectId: string): string {
  const items = Array.from({ length: 100 }, (_, index) => ({
    id: String(index),
    method: 'POST',
    path: '/v1/time/timerecords',
    body: timeRecordBody(projectId, index),
  }))
  return JSON.stringify(items)
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'self',
    description: 'GET /users/@self (token check + a view over 50 users)',
    kind: 'read',
    request: (c) => ({ method: 'GET', path: withQuery('/v1/users/@self', { token: c.token }), headers: tenantHeaders(c), expectStatus: 200 }),
  },
  {
    name: 'project',
    description: 'GET one project by id (token check, references expanded)',
    kind: 'read',
    request: (c) => ({ method: 'GET', path: withQuery(`/v1/time/projects/${c.project.id}`, { token: c.token }), headers: tenantHeaders(c), expectStatus: 200 }),
  },
  {
    name: 'list',
    description: "GET 100 time records, $filter=project/id eq '…', $orderby=start desc (references expanded)",
    kind: 'read',
    largeAnswer: true,
    request: (c) => ({ method: 'GET', path: withQuery('/v1/time/timerecords', listQuery(c)), headers: tenantHeaders(c), expectStatus: 200 }),
  },
  {
    name: 'list-noexpand',
    description: 'the same list with no_expand=true (references as stubs)',
    kind: 'read',
    largeAnswer: true,
    request: (c) => ({ method: 'GET', path: withQuery('/v1/time/timerecords', listQuery(c, { no_expand: 'true' })), headers: tenantHeaders(c), expectStatus: 200 }),
  },
  {
    name: 'count',
    description: "GET $count, $filter=project/id eq '…' and billable eq true",
    kind: 'read',
    request: (c) => ({
      method: 'GET',
      path: withQuery('/v1/time/timerecords/$count', { $filter: `project/id eq '${c.project.id}' and billable eq true`, token: c.token }),
      headers: tenantHeaders(c),
      expectStatus: 200,
    }),
  },
  {
    name: 'readtotals',
    description: 'GET readtotals grouped by project/id for one month (range=31)',
    kind: 'read',
    largeAnswer: true,
    request: (c) => ({
      method: 'GET',
      path: withQuery('/v1/time/reports/readtotals', { summary: 'project/id', range: 31, range_from: c.reportMonth, token: c.token }),
      headers: tenantHeaders(c),
      expectStatus: 200,
    }),
  },
  {
    name: 'login',
    description: 'GET /auth/login, Basic auth (Argon2id m=19456 t=2 p=1) + a token write',
    kind: 'write',
    maxConnections: 8,
    request: (c) => ({
      method: 'GET',
      path: withQuery('/v1/auth/login', { apikey: BENCH_API_KEY }),
      headers: { ...tenantHeaders(c), Authorization: basicAuth(c.fixture.ownerEmail, c.fixture.ownerPassword) },
      expectStatus: 200,
    }),
  },
  {
    name: 'post',
    description: 'POST one time record (durable: 201 after the log flush)',
    kind: 'write',
    request: (c) => ({
      method: 'POST',
      path: withQuery('/v1/time/timerecords', { token: c.token }),
      headers: tenantHeaders(c, true),
      body: timeRecordBody(c.project.id),
      bodies: freshBodies(c.project.id),
      expectStatus: 201,
    }),
  },
  {
    name: 'put',
    description: 'PUT one time record with version_ignore=true (durable)',
    kind: 'write',
    request: (c) => ({
      method: 'PUT',
      path: withQuery(`/v1/time/timerecords/${c.fixture.sampleRecordId}`, { version_ignore: 'true', token: c.token }),
      headers: tenantHeaders(c, true),
      body: JSON.stringify({ description: 'changed by the benchmark', billable: false }),
      expectStatus: 200,
    }),
  },
  {
    name: 'batch',
    description: 'POST /v1/batch with 100 time record creations (one log entry)',
    kind: 'write',
    maxConnections: 8,
    request: (c) => ({
      method: 'POST',
      path: withQuery('/v1/batch', { token: c.token }),
      headers: tenantHeaders(c, true),
      body: batchBody(c.project.id),
      expectStatus: 200,
    }),
  },
]

export const SCENARIO_NAMES = [...SCENARIOS.map((scenario) => scenario.name), 'mixed']

/** The load-tool options that drive `scenario` (without the duration): never pipelined, at most its maxConnections. */
export function scenarioLoad(scenario: Scenario, context: ScenarioContext, connections: number, tool: LoadTool): Omit<LoadOptions, 'durationSeconds'> {
  const request = scenario.request(context)
  return {
    url: `http://127.0.0.1:${context.port}${request.path}`,
    method: request.method,
    headers: request.headers,
    connections: Math.min(connections, scenario.maxConnections ?? Number.POSITIVE_INFINITY),
    pipelining: 1,
    tool,
    ...(request.body === undefined ? {} : { body: request.body }),
    ...(request.bodies === undefined || tool === 'wrk' ? {} : { bodies: request.bodies }),
  }
}

/** One request of the scenario before its load, so a broken scenario fails loudly; its answer's text. */
export async function checkScenarioOnce(scenario: Scenario, context: ScenarioContext): Promise<string> {
  const request = scenario.request(context)
  const client = new BenchClient(context.port)
  try {
    const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]))
    return (await client.expect(request.expectStatus, request.method, request.path, { headers, ...(request.body === undefined ? {} : { body: request.body }) })).text
  } finally {
    client.close()
  }
}
