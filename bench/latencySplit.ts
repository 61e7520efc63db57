/*
 * Where a scenario's tail latency is spent: in the server, or outside it.
 * The server runs as in the runner (serverProcess.ts, automatic snapshots
 * off) on a copy of the fixture, and the scenario is driven in rounds by
 * the load tool. Each round reads the server's own request-duration histogram (from
 * receiving a request to writing its answer, /metrics on the admin
 * listener) and the group-commit flush histogram before and after, and
 * prints them beside the load tool's p99. When the tool sees a p99 far
 * above what the server measured, the time went to the kernel, to
 * scheduling, or to the tool itself, which shares the machine's cores.
 *
 *   node dist/bench/latencySplit.js [--scenario post] [--records 1000000]
 *        [--rounds 6] [--duration 5] [--connections 50]
 */
import fs from 'node:fs'
import { scriptArgs } from './cliOptions.js'
import { copyFixture, readFixtureInfo } from './fixture.js'
import { BenchClient } from './httpClient.js'
import { freePort, runLoad } from './loadgen.js'
import { ownerLogin, scenarioContext, SCENARIOS } from './scenarios.js'
import { NO_AUTO_SNAPSHOTS, startServer } from './serverProcess.js'

const ADMIN_KEY = 'latency-split-admin-key'

/** Cumulative bucket counts (le → count) of one histogram family, summed over the series whose labels contain `filter`. */
function buckets(metrics: string, family: string, filter: string): Map<number, number> {
  const counts = new Map<number, number>()
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(`${family}_bucket`) || !line.includes(filter)) continue
    const le = /le="([^"]+)"/.exec(line)?.[1]
    if (le === undefined) continue
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le)
    counts.set(bound, (counts.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)))
  }
  return counts
}

/** What a round added to a histogram: observations in total, above `seconds`, and the smallest bound holding 99 %. */
function roundFigures(before: Map<number, number>, after: Map<number, number>, seconds: number): { total: number; over: number; p99Bound: number } {
  const added = (bound: number) => (after.get(bound) ?? 0) - (before.get(bound) ?? 0)
  const total = added(Number.POSITIVE_INFINITY)
  const bounds = [...after.keys()].sort((a, b) => a - b)
  const p99Bound = bounds.find((bound) => added(bound) >= 0.99 * total) ?? Number.POSITIVE_INFINITY
  return { total, over: total - added(seconds), p99Bound }
}

const args = scriptArgs({
  usage: 'node dist/bench/latencySplit.js [options]',
  about: "A scenario's tail latency, the load tool's beside the server's own (request and flush histograms from /metrics), in rounds.",
  options: {
    scenario: { value: 'name', help: `the load scenario (default post): ${SCENARIOS.map(({ name }) => name).join(', ')}` },
    records: { value: 'n', help: 'the fixture (bench/data/<n>/) (default 1000000)' },
    rounds: { value: 'n', help: 'rounds (default 6)' },
    duration: { value: 's', help: 'measured seconds per round (default 5)' },
    connections: { value: 'n', help: 'connections (default 50)' },
  },
})
const scenarioName = args.text('scenario') ?? 'post'
const records = args.positiveInteger('records', 1_000_000)
const rounds = args.positiveInteger('rounds', 6)
const durationSeconds = args.positiveInteger('duration', 5)
const connections = args.positiveInteger('connections', 50)
const scenario = SCENARIOS.find((candidate) => candidate.name === scenarioName) ?? args.refuse(`unknown scenario '${scenarioName}'`)
const fixture = readFixtureInfo(records)
if (fixture === null) throw new Error(`no fixture with ${records} records; run npm run bench:generate -- --records ${records}`)

const dataDir = copyFixture(records, 'latency-split')
const adminPort = await freePort()
const server = await startServer({ dataDir, env: { ...NO_AUTO_SNAPSHOTS, ADMIN_PORT: String(adminPort), ADMIN_KEY } })
try {
  const client = new BenchClient(server.port)
  const { token } = await ownerLogin(client, fixture)
  client.close()
  const request = scenario.request(scenarioContext(server.port, token, fixture))
  const load = {
    url: `http://127.0.0.1:${server.port}${request.path}`,
    method: request.method,
    headers: request.headers,
    connections: Math.min(connections, scenario.maxConnections ?? Number.POSITIVE_INFINITY),
    pipelining: 1 as const,
    ...(request.body === undefined ? {} : { body: request.body }),
  }
  const metrics = async () => (await fetch(`http://127.0.0.1:${adminPort}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text()
  await runLoad({ ...load, durationSeconds: 1 })
  console.log(`${scenario.name}, ${load.connections} connections, ${durationSeconds} s per round, ${records} records`)
  for (let round = 1; round <= rounds; round += 1) {
    const before = await metrics()
    const result = await runLoad({ ...load, durationSeconds })
    const after = await metrics()
    const filter = `method="${request.method}"`
    const served = roundFigures(buckets(before, 'timeledger_http_request_duration_seconds', filter), buckets(after, 'timeledger_http_request_duration_seconds', filter), 0.1)
    const flushes = roundFigures(buckets(before, 'timeledger_log_flush_duration_seconds', ''), buckets(after, 'timeledger_log_flush_duration_seconds', ''), 0.1)
    console.log(
      `round ${round}: tool ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.p99Ms.toFixed(1)} ms | ` +
        `server ${served.total} answers, p99 ≤ ${served.p99Bound * 1000} ms, ${served.over} over 100 ms | ` +
        `${flushes.total} flushes, p99 ≤ ${flushes.p99Bound * 1000} ms, ${flushes.over} over 100 ms`,
    )
  }
} finally {
  await server.stop()
  fs.rmSync(dataDir, { recursive: true, force: true })
}
