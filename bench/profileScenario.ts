/*
 * Where the server's time goes in one scenario: the service runs in this
 * process (startService, exactly what `cli.js serve` runs) on a throwaway
 * copy of the fixture, the tenant is activated by a login, and after a
 * warm-up the V8 CPU profiler (node:inspector, same thread) records while
 * the load tool — a separate process — drives one scenario. The profile is
 * written to bench/results/profile-<name>-<timestamp>.cpuprofile (open it in
 * Chrome DevTools) and summarized: top self time and inclusive time.
 *
 *   node dist/bench/profileScenario.js --scenario project [--records 1000000]
 *        [--duration 5] [--connections 50] [--tool wrk|autocannon]
 *   node dist/bench/profileScenario.js --query fullscan-substringof …
 *
 * `--query` names a single-request figure of serverTimes.ts; it is driven
 * with one connection. Automatic snapshots are off, as in the runner.
 *
 * The V8 profiler counts much of a request's own work as "(idle)": uWS
 * runs its handlers inside libuv's poll, while Node has the isolate marked
 * idle (stopping Node's idle notifier did not change it). For a cheap
 * request (one GET) the samples outside "(idle)" are a small part of its
 * cost, so measure such scenarios with Linux perf on the server process
 * (`NODE_OPTIONS=--perf-basic-prof` names the JavaScript frames), as
 * bench/RESULTS.md does.
 */
import fs from 'node:fs'
import { Session } from 'node:inspector/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../src/config.js'
import { startService } from '../src/service.js'
import { copyFixture, readFixtureInfo } from './fixture.js'
import { scriptArgs, type ScriptArgs } from './cliOptions.js'
import { BenchClient } from './httpClient.js'
import { runLoad, wrkAvailable, type LoadOptions, type LoadTool } from './loadgen.js'
import { summarizeProfile } from './profileSummary.js'
import { ownerLogin, scenarioContext, SCENARIOS, type ScenarioContext } from './scenarios.js'
import { NO_AUTO_SNAPSHOTS, serverEnv } from './serverProcess.js'
import { serverTimeSpecs } from './serverTimes.js'

const RESULTS_DIR = fileURLToPath(new URL('../../bench/results/', import.meta.url))

/** The load to profile: a scenario at `connections`, or a server-time query on one connection. */
function loadFor(args: ScriptArgs, context: ScenarioContext, connections: number, tool: LoadTool): { name: string; load: Omit<LoadOptions, 'durationSeconds'> } {
  const url = (requestPath: string) => `http://127.0.0.1:${context.port}${requestPath}`
  const queryName = args.text('query')
  if (queryName !== undefined) {
    const spec = serverTimeSpecs(context).find((candidate) => candidate.name === queryName)
    if (spec === undefined)
      throw new Error(
        `unknown query; queries: ${serverTimeSpecs(context)
          .map((candidate) => candidate.name)
          .join(', ')}`,
      )
    return { name: queryName, load: { url: url(spec.path), method: 'GET', headers: { Host: `${context.fixture.tenant}.localhost:${context.port}` }, connections: 1, tool } }
  }
  const scenarioName = args.text('scenario') ?? 'project'
  const scenario = SCENARIOS.find((candidate) => candidate.name === scenarioName)
  if (scenario === undefined) throw new Error(`unknown scenario; scenarios: ${SCENARIOS.map((candidate) => candidate.name).join(', ')}`)
  const request = scenario.request(context)
  return {
    name: scenarioName,
    load: {
      url: url(request.path),
      method: request.method,
      headers: request.headers,
      tool,
      connections: Math.min(connections, scenario.maxConnections ?? connections),
      ...(request.body === undefined ? {} : { body: request.body }),
    },
  }
}

function printSummary(file: string): void {
  const { totalMs, functions } = summarizeProfile(JSON.parse(fs.readFileSync(file, 'utf8')))
  console.log(`\n${file}: ${totalMs.toFixed(0)} ms sampled`)
  for (const [title, key] of [
    ['self time', 'selfMs'],
    ['inclusive time', 'totalMs'],
  ] as const) {
    console.log(`\n${title}`)
    for (const row of [...functions].sort((a, b) => b[key] - a[key]).slice(0, 30)) {
      console.log(`${row[key].toFixed(0).padStart(8)} ms ${((100 * row[key]) / totalMs).toFixed(1).padStart(5)}%  ${row.name}`)
    }
  }
}

async function main(): Promise<void> {
  const args = scriptArgs({
    usage: 'node dist/bench/profileScenario.js [options]',
    about:
      'Runs the service in this process on a copy of the fixture, profiles it (node:inspector) while one scenario or one\n' +
      'single-request query runs, writes bench/results/profile-<name>-<time>.cpuprofile and prints the top functions.',
    options: {
      scenario: { value: 'name', help: `the load scenario (default project): ${SCENARIOS.map(({ name }) => name).join(', ')}` },
      query: { value: 'name', help: 'a single-request query of serverTimes.ts instead, on one connection' },
      records: { value: 'n', help: 'the fixture (bench/data/<n>/) (default 1000000)' },
      duration: { value: 's', help: 'profiled seconds (default 5)' },
      connections: { value: 'n', help: 'connections (default 50)' },
      tool: { value: 'wrk|autocannon', help: 'load generator (default: wrk when it is on PATH)' },
    },
  })
  const records = args.positiveInteger('records', 1_000_000)
  const durationSeconds = args.positiveInteger('duration', 5)
  const connections = args.positiveInteger('connections', 50)
  const tool = (args.text('tool') ?? (wrkAvailable() ? 'wrk' : 'autocannon')) as LoadTool
  const fixture = readFixtureInfo(records)
  if (fixture === null) throw new Error(`no fixture with ${records} records; run npm run bench:generate -- --records ${records}`)
  const dataDir = copyFixture(records, 'profile')
  try {
    const service = await startService(loadConfig(serverEnv(dataDir, NO_AUTO_SNAPSHOTS)))
    const client = new BenchClient(service.port)
    const { token } = await ownerLogin(client, fixture)
    client.close()
    const context = scenarioContext(service.port, token, fixture)
    const { name, load } = loadFor(args, context, connections, tool)
    await runLoad({ ...load, durationSeconds: 1 })
    const session = new Session()
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.start')
    const result = await runLoad({ ...load, durationSeconds })
    const { profile } = await session.post('Profiler.stop')
    session.disconnect()
    console.log(
      `${name}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms (${result.tool}, ${load.connections} conns, ${result.non2xx} non-2xx)`,
    )
    fs.mkdirSync(RESULTS_DIR, { recursive: true })
    const file = path.join(RESULTS_DIR, `profile-${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`)
    fs.writeFileSync(file, JSON.stringify(profile))
    printSummary(file)
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  // No clean stop: it would snapshot the large tenant into a copy that is already gone.
  process.exit(0)
}

await main()
