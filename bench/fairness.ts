/*
 * Fairness between tenants (ARCHITECTURE.md §2.4, hardening finding 19): how long a
 * small tenant's `GET /v1/users/@self` takes while a big tenant sends heavy
 * reads back to back.
 *
 * The server runs on a throwaway copy of the fixture (bench/data/<records>/,
 * the big tenant `bench`); a small tenant is signed up over HTTP with a
 * little data (mixedLoad.ts). Then, each for `--duration` seconds:
 *
 *   1. idle: the small tenant's `users/@self`, one request at a time over one
 *      connection, nothing else running;
 *   2. loaded: the same, while `--heavy` connections to the big tenant each
 *      send the heavy reads below in turn, back to back: a scan
 *      (`substringof(…, description)`), a filtered `$count`, a `summary`
 *      grouped by user, and an `$orderby` on an unindexed field.
 *
 * It prints the small tenant's p50/p99/max in both phases, and for the heavy
 * reads how many were answered 200 and 429 (the heavy-read budget; a
 * connection pauses REFUSED_PAUSE_MS after a 429) and their median time. `--cli` runs another build (a build of main, for the A/B);
 * `--env NAME=value,…` passes settings (READ_SLICE_MS,
 * TENANT_HEAVY_READ_MS_PER_S) to the server.
 *
 *   node dist/bench/fairness.js [--records 1000000] [--duration 20] [--heavy 3]
 *        [--cli /path/to/dist/src/cli.js] [--env NAME=value,…] [--label text]
 */
import fs from 'node:fs'
import { copyFixture, readFixtureInfo } from './fixture.js'
import { BenchClient, withQuery } from './httpClient.js'
import { scriptArgs } from './cliOptions.js'
import { createSmallTenants } from './mixedLoad.js'
import { ownerLogin } from './scenarios.js'
import { NO_AUTO_SNAPSHOTS, startServer } from './serverProcess.js'

const HEAVY_READS: readonly { name: string; path: string; query: Record<string, string> }[] = [
  { name: 'scan', path: '/v1/time/timerecords', query: { $filter: "substringof('no such words', description)", $top: '100' } },
  { name: 'count', path: '/v1/time/timerecords/$count', query: { $filter: 'billable eq true and duration gt 3600000' } },
  { name: 'summary', path: '/v1/time/timerecords/summary', query: { summary: 'user/id;count();sum(duration)' } },
  { name: 'orderby', path: '/v1/time/timerecords', query: { $orderby: 'description desc', $top: '20' } },
]

/** How long a heavy-read connection pauses after a 429. */
const REFUSED_PAUSE_MS = 10

interface Latencies {
  count: number
  p50: number
  p99: number
  max: number
}

function latencies(values: number[]): Latencies {
  const sorted = Float64Array.from(values).sort()
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? 0 }
}

/** `GET users/@self` of the small tenant, one at a time, until `untilMs`: the wall time of each. */
async function selfLoop(client: BenchClient, tenant: string, token: string, untilMs: number): Promise<number[]> {
  const times: number[] = []
  const path = withQuery('/v1/users/@self', { token })
  while (performance.now() < untilMs) {
    const response = await client.expect(200, 'GET', path, { tenant })
    times.push(response.ms)
  }
  return times
}

interface HeavyFigures {
  ok: number
  refused: number
  okMs: number[]
}

/** The heavy reads in turn on one connection, until `untilMs`. */
async function heavyLoop(client: BenchClient, tenant: string, token: string, untilMs: number, start: number, figures: HeavyFigures): Promise<void> {
  for (let index = start; performance.now() < untilMs; index += 1) {
    const read = HEAVY_READS[index % HEAVY_READS.length] as (typeof HEAVY_READS)[number]
    const response = await client.request('GET', withQuery(read.path, { ...read.query, token }), { tenant })
    if (response.status === 200) {
      figures.ok += 1
      figures.okMs.push(response.ms)
    } else if (response.status === 429) {
      figures.refused += 1
      // Not the Retry-After second: the loop keeps asking, only pausing REFUSED_PAUSE_MS so that it measures the
      // budget rather than a flood of 429s (which the per-user request limit, off in the benchmark, is for).
      await new Promise((resolve) => setTimeout(resolve, REFUSED_PAUSE_MS))
    } else throw new Error(`${read.name}: ${response.status} ${response.text.slice(0, 200)}`)
  }
}

function parseEnv(text: string | undefined): Record<string, string> {
  const env: Record<string, string> = {}
  for (const pair of (text ?? '').split(',').filter((part) => part !== '')) {
    const [name, value] = pair.split('=')
    if (name === undefined || value === undefined) throw new Error(`--env takes NAME=value,…, got '${pair}'`)
    env[name] = value
  }
  return env
}

async function main(): Promise<void> {
  const args = scriptArgs({
    usage: 'node dist/bench/fairness.js [options]',
    about: "A small tenant's GET users/@self (p50/p99/max) while the big tenant sends heavy reads back to back, idle and loaded.",
    options: {
      records: { value: 'n', help: 'the fixture of the big tenant (bench/data/<n>/) (default 1000000)' },
      duration: { value: 's', help: 'seconds of each phase (default 20)' },
      heavy: { value: 'n', help: 'connections sending heavy reads (default 3)' },
      cli: { value: 'path/to/cli.js', help: "the server to run (default: this tree's), e.g. a build of main for an A/B" },
      env: { value: 'NAME=value,…', help: 'settings passed to the server (READ_SLICE_MS, TENANT_HEAVY_READ_MS_PER_S, …)' },
      label: { value: 'text', help: 'the name of this run in the output (default: the build)' },
    },
  })
  const records = args.positiveInteger('records', 1_000_000)
  const durationMs = args.positiveInteger('duration', 20) * 1000
  const heavyConnections = args.positiveInteger('heavy', 3)
  const cli = args.text('cli')
  const env = parseEnv(args.text('env'))
  const label = args.text('label') ?? (cli === undefined ? 'this build' : cli)
  const fixture = readFixtureInfo(records)
  if (fixture === null) throw new Error(`no fixture of ${records} records: npm run bench:generate -- --records ${records}`)
  const dataDir = copyFixture(records, 'fairness')
  const server = await startServer({ dataDir, cli, env: { ...NO_AUTO_SNAPSHOTS, ...env } })
  const setup = new BenchClient(server.port)
  try {
    const { token: bigToken, ms: activationMs } = await ownerLogin(setup, fixture)
    const [small] = await createSmallTenants(setup, 1)
    if (small === undefined) throw new Error('no small tenant')
    // Warm both paths once (compiled filters, first sorts).
    for (const read of HEAVY_READS) await setup.request('GET', withQuery(read.path, { ...read.query, token: bigToken }), { tenant: fixture.tenant })
    const smallClient = new BenchClient(server.port)
    await selfLoop(smallClient, small.tenant, small.token, performance.now() + 1000)

    const idle = latencies(await selfLoop(smallClient, small.tenant, small.token, performance.now() + durationMs))

    const until = performance.now() + durationMs
    const figures: HeavyFigures = { ok: 0, refused: 0, okMs: [] }
    const heavyClients = Array.from({ length: heavyConnections }, () => new BenchClient(server.port))
    const heavy = heavyClients.map((client, index) => heavyLoop(client, fixture.tenant, bigToken, until, index, figures))
    const loaded = latencies(await selfLoop(smallClient, small.tenant, small.token, until))
    await Promise.all(heavy)
    for (const client of [smallClient, ...heavyClients]) client.close()

    const heavyMs = latencies(figures.okMs)
    const result = {
      label,
      records,
      env,
      durationS: durationMs / 1000,
      heavyConnections,
      activationMs: Math.round(activationMs),
      idle,
      loaded,
      heavy: { ok: figures.ok, refused: figures.refused, p50: heavyMs.p50, p99: heavyMs.p99 },
    }
    const f = (ms: number) => ms.toFixed(2)
    console.log(`\n${label} (${records.toLocaleString('en')} records, ${heavyConnections} heavy connections, ${durationMs / 1000} s, env ${JSON.stringify(env)})`)
    console.log('| phase | small-tenant users/@self | p50 ms | p99 ms | max ms |')
    console.log('|---|---|---|---|---|')
    console.log(`| idle | ${idle.count} | ${f(idle.p50)} | ${f(idle.p99)} | ${f(idle.max)} |`)
    console.log(`| big tenant's heavy reads | ${loaded.count} | ${f(loaded.p50)} | ${f(loaded.p99)} | ${f(loaded.max)} |`)
    console.log(`heavy reads: ${figures.ok} answered (p50 ${f(heavyMs.p50)} ms, p99 ${f(heavyMs.p99)} ms), ${figures.refused} refused with 429`)
    console.log(JSON.stringify(result))
  } finally {
    setup.close()
    await server.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
