/*
 * What validators, quota headers and paging headers cost and save (issue 29):
 * wrk against two servers in turn, each in its own process on data made the
 * same way — a build before them (`--baseline <cli.js>`, e.g. main's) and
 * this tree — measuring requests/s and the server's CPU per request
 * (processCpu.ts) for a single object, a list page, the same with a
 * matching If-None-Match (304, this tree only), and the list with
 * `$inlinecount=allpages`. The rate limit is on (high enough never to
 * refuse), so the quota headers are paid for as in production.
 *
 *   npx tsc -p . && node dist/bench/conditionalRequests.js --baseline /tmp/main/dist/src/cli.js [--duration 5] [--connections 20] [--rounds 2]
 */
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { scriptArgs } from './cliOptions.js'
import { BenchClient, withQuery } from './httpClient.js'
import { runLoad } from './loadgen.js'
import { signUpAndLogin } from './mixedLoad.js'
import { withCpuPerRequest } from './processCpu.js'
import { startServer, type BenchServer } from './serverProcess.js'

const TENANT = 'cond'
const CLIENTS = 100
const PROJECTS = 1000
const PAGE = 100

interface Prepared {
  server: BenchServer
  token: string
  projectId: string
}

/** A server on a fresh data dir with CLIENTS clients and PROJECTS projects (each embedding a client). */
async function prepare(cli: string | undefined): Promise<Prepared> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-conditional-'))
  const server = await startServer({ dataDir, env: { RATE_LIMIT_REQUESTS: '1000000000' }, ...(cli === undefined ? {} : { cli }) })
  const client = new BenchClient(server.port)
  const token = await signUpAndLogin(client, TENANT)
  const batch = async (items: object[]) => {
    const answer = await client.expect(200, 'POST', withQuery('/v1/batch', { token }), { tenant: TENANT, body: JSON.stringify(items) })
    return answer.json as { id: string; code: number; body: string }[]
  }
  const clientIds = (
    await batch(Array.from({ length: CLIENTS }, (_, index) => ({ id: `c${index}`, method: 'POST', path: '/v1/time/clients', body: JSON.stringify({ name: `Client ${index}` }) })))
  ).map((answer) => (JSON.parse(answer.body) as { id: string }).id)
  let projectId = ''
  for (let start = 0; start < PROJECTS; start += 100) {
    const items = Array.from({ length: 100 }, (_, offset) => ({
      id: `p${start + offset}`,
      method: 'POST',
      path: '/v1/time/projects',
      body: JSON.stringify({ name: `Project ${start + offset}`, client: { id: clientIds[(start + offset) % CLIENTS] } }),
    }))
    projectId = (JSON.parse((await batch(items))[0]?.body ?? '{}') as { id: string }).id
  }
  client.close()
  return { server, token, projectId }
}

interface Scenario {
  name: string
  path: (prepared: Prepared) => string
  /** Sends the tag a first GET answered as If-None-Match. */
  conditional?: boolean
  /** Only on this tree (the baseline has no such answer). */
  newOnly?: boolean
}

const SCENARIOS: Scenario[] = [
  { name: 'object', path: (p) => withQuery(`/v1/time/projects/${p.projectId}`, { token: p.token }) },
  { name: 'object, If-None-Match → 304', path: (p) => withQuery(`/v1/time/projects/${p.projectId}`, { token: p.token }), conditional: true, newOnly: true },
  { name: `list of ${PAGE}`, path: (p) => withQuery('/v1/time/projects', { token: p.token, $top: PAGE }) },
  { name: `list of ${PAGE}, If-None-Match → 304`, path: (p) => withQuery('/v1/time/projects', { token: p.token, $top: PAGE }), conditional: true, newOnly: true },
  { name: `list of ${PAGE}, $inlinecount=allpages`, path: (p) => withQuery('/v1/time/projects', { token: p.token, $top: PAGE, $inlinecount: 'allpages' }), newOnly: true },
]

/** The ETag a GET of `url` answers. */
function etagOf(url: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { host: `${TENANT}.localhost` }, agent: false }, (response) => {
        response.resume()
        resolve(response.headers.etag)
      })
      .on('error', reject)
  })
}

interface Figure {
  requestsPerSecond: number
  cpuMicrosPerRequest: number | null
}

async function measure(prepared: Prepared, scenario: Scenario, duration: number, connections: number): Promise<Figure> {
  const url = `http://127.0.0.1:${prepared.server.port}${scenario.path(prepared)}`
  const headers: Record<string, string> = { Host: `${TENANT}.localhost` }
  if (scenario.conditional === true) {
    const tag = await etagOf(url)
    if (tag === undefined) throw new Error(`${scenario.name}: no ETag`)
    headers['If-None-Match'] = tag
  }
  await runLoad({ url, method: 'GET', headers, connections, durationSeconds: 1 })
  const result = await withCpuPerRequest(prepared.server.pid, () => runLoad({ url, method: 'GET', headers, connections, durationSeconds: duration }))
  if (result.errors > 0 || result.non2xx > 0) throw new Error(`${scenario.name}: ${result.errors} errors, ${result.non2xx} non-2xx answers`)
  return { requestsPerSecond: result.requestsPerSecond, cpuMicrosPerRequest: result.cpuMicrosPerRequest }
}

const args = scriptArgs({
  usage: 'node dist/bench/conditionalRequests.js [--baseline <cli.js of an older build>] [options]',
  about: "Conditional requests (If-None-Match → 304) against full answers, on this tree's server and optionally an older build's.",
  options: {
    baseline: { value: '<cli.js>', help: "an older build's dist/src/cli.js, measured beside this tree (default: none)" },
    duration: { value: 's', help: 'measured seconds per figure (default 5)' },
    connections: { value: 'n', help: 'connections (default 20)' },
    rounds: { value: 'n', help: 'rounds, alternating the servers (default 2)' },
  },
})
const baselineCli = args.text('baseline')
const duration = args.positiveInteger('duration', 5)
const connections = args.positiveInteger('connections', 20)
const rounds = args.positiveInteger('rounds', 2)

const servers: { label: string; prepared: Prepared }[] = []
if (baselineCli !== undefined) servers.push({ label: 'baseline', prepared: await prepare(baselineCli) })
servers.push({ label: 'this tree', prepared: await prepare(undefined) })
const figures = new Map<string, Figure[]>()
try {
  for (let round = 0; round < rounds; round += 1) {
    for (const scenario of SCENARIOS) {
      for (const { label, prepared } of servers) {
        if (scenario.newOnly === true && label === 'baseline') continue
        const figure = await measure(prepared, scenario, duration, connections)
        const key = `${scenario.name}\u0000${label}`
        figures.set(key, [...(figures.get(key) ?? []), figure])
        console.error(`round ${round + 1}: ${scenario.name} on ${label}: ${Math.round(figure.requestsPerSecond)} req/s, ${figure.cpuMicrosPerRequest?.toFixed(1) ?? '?'} µs CPU`)
      }
    }
  }
} finally {
  for (const { prepared } of servers) await prepared.server.stop()
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length)
console.log(`| scenario | server | req/s (runs) | CPU µs per request (mean) |`)
console.log(`| --- | --- | --- | --- |`)
for (const scenario of SCENARIOS) {
  for (const { label } of servers) {
    const runs = figures.get(`${scenario.name}\u0000${label}`)
    if (runs === undefined) continue
    const cpu = mean(runs.map((run) => run.cpuMicrosPerRequest ?? 0))
    console.log(`| ${scenario.name} | ${label} | ${runs.map((run) => Math.round(run.requestsPerSecond)).join(' / ')} | ${cpu.toFixed(1)} |`)
  }
}
