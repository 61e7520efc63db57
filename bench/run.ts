/*
 * The benchmark runner (issue 10). In order:
 *
 *   1. the fixture: bench/data/<records>/, generated first if missing (generate.ts);
 *   2. the raw-stack baselines (baselines.ts): bare uWS GET, uWS + one flushed put;
 *   3. an empty server: start-up time and resident memory;
 *   4. the real server on a throwaway copy of the fixture: start-up time, the
 *      first request (which activates the tenant from its snapshot), login;
 *   5. single-request server times on one connection (serverTimes.ts);
 *   6. the load scenarios (scenarios.ts), reads first, each after a short
 *      unmeasured warm-up, with the tool's figures and the ratio to the
 *      matching baseline; resident memory is sampled around the reads;
 *   7. batch vs single on one connection;
 *   8. the mixed workload over 100 tenants signed up over HTTP (mixedLoad.ts);
 *   9. the server stops cleanly; engine figures in a separate process
 *      (engineFigures.ts): recovery, heap, snapshot, log replay.
 * Then a Markdown table is printed and the run is written as JSON (and the
 * table as .md) to bench/results/run-<timestamp>.
 *
 *   npm run bench -- [--scenario name[,name]] [--duration 5] [--connections 50]
 *                    [--records 1000000] [--tool wrk|autocannon] [--warmup 1]
 *                    [--skip baselines,times,batch,engine,memory] [--ports 9100-9199]
 *                    [--profile] [--auto-snapshots]
 *
 * `npm run bench -- --help` explains each option (RUN_DOC below).
 */
import { execFile } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { measureBaselines, measureSameBytes, type BaselineOptions, type BaselineReport } from './baselines.js'
import type { EngineFigures } from './engineFigures.js'
import { copyFixture, type FixtureInfo } from './fixture.js'
import { DEFAULT_RECORDS, ensureFixture } from './generate.js'
import { BenchClient } from './httpClient.js'
import { runLoad, wrkAvailable, type LoadResult, type LoadTool } from './loadgen.js'
import { withCpuPerRequest } from './processCpu.js'
import { createSmallTenants, mixedDeck, runDeck } from './mixedLoad.js'
import { PortPicker, parsePortRange } from './portRange.js'
import { scriptArgs, type ScriptDoc } from './cliOptions.js'
import { summarizeProfile } from './profileSummary.js'
import { markdownReport, type RunReport, type SameBytesFigure, type ScenarioResult, type ServerFigures } from './runReport.js'
import { checkScenarioOnce, ownerLogin, scenarioContext, scenarioLoad, SCENARIO_NAMES, SCENARIOS, type Scenario, type ScenarioContext } from './scenarios.js'
import { NO_AUTO_SNAPSHOTS, startServer, type BenchServer } from './serverProcess.js'
import { measureBatchVsSingle, measureServerTimes } from './serverTimes.js'
import { evaluateTargets } from './targets.js'

const MIXED_TENANTS = 100
/**
 * Automatic snapshots off during the load (unless --auto-snapshots): a
 * snapshot of the million-record tenant is encoded in slices between requests
 * but still takes about 10 s of one core, so a scenario that happened to cross
 * the 50,000-command mark would measure that work instead of its own path.
 * The snapshot is measured on its own (engineFigures.ts).
 */
const SKIPPABLE = ['baselines', 'times', 'batch', 'engine', 'memory']
const RESULTS_DIR = fileURLToPath(new URL('../../bench/results/', import.meta.url))

interface RunOptions {
  scenarios: string[]
  durationSeconds: number
  connections: number
  records: number
  tool: LoadTool
  warmupSeconds: number
  skip: Set<string>
  profile: boolean
  autoSnapshots: boolean
  /** Where the run's servers listen (--ports; default any free port). */
  ports: PortPicker
}

// ---------------------------------------------------------------- options

const RUN_DOC: ScriptDoc = {
  usage: 'npm run bench -- [options]     (or: node dist/bench/run.js [options])',
  about:
    'Runs the baselines, the real server on a copy of the fixture, the load scenarios, batch vs single, the mixed\n' +
    'workload and the engine figures; prints Markdown tables and writes bench/results/run-<time>.json and .md.',
  options: {
    scenario: { value: 'a,b', help: `load scenarios to run (default: all): ${SCENARIO_NAMES.join(', ')}` },
    duration: { value: 's', help: 'measured seconds per scenario, whole seconds (default 5)' },
    connections: { value: 'n', help: 'connections per scenario; login and batch use at most 8 (default 50)' },
    records: { value: 'n', help: `time records of the big tenant; its fixture is generated first when missing (default ${DEFAULT_RECORDS})` },
    tool: { value: 'wrk|autocannon', help: 'load generator (default: wrk when it is on PATH, else autocannon)' },
    warmup: { value: 's', help: 'unmeasured load before each scenario, whole seconds; 0: none (default 1)' },
    skip: { value: 'a,b', help: `leave out steps: ${SKIPPABLE.join(', ')} (default: none)` },
    ports: {
      value: 'first-last',
      help: 'listen only on ports of this range, e.g. 9100-9199: every server of the run (baselines, the\nempty server, the real server and its admin listener) takes the next free one (default: any free port)',
    },
    profile: { help: 'run the server with --cpu-prof and summarize the profile at the end' },
    'auto-snapshots': { help: "keep the server's automatic snapshots during the load (off by default: a snapshot of the big\ntenant in the middle of a scenario would measure the snapshot)" },
  },
}

/** The options (cliOptions.ts: --help prints the usage and exits, a line the runner does not take exits 2). */
function parseOptions(argv: readonly string[]): RunOptions {
  const args = scriptArgs(RUN_DOC, argv)
  const scenarios = (args.text('scenario') ?? SCENARIO_NAMES.join(','))
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  for (const name of scenarios) if (!SCENARIO_NAMES.includes(name)) args.refuse(`unknown scenario '${name}'; scenarios: ${SCENARIO_NAMES.join(', ')}`)
  const skip = new Set((args.text('skip') ?? '').split(',').filter((name) => name !== ''))
  for (const name of skip) if (!SKIPPABLE.includes(name)) args.refuse(`--skip takes ${SKIPPABLE.join(', ')}`)
  const toolText = args.text('tool') ?? (wrkAvailable() ? 'wrk' : 'autocannon')
  const tool: LoadTool = toolText === 'wrk' || toolText === 'autocannon' ? toolText : args.refuse('--tool must be wrk or autocannon')
  const portsText = args.text('ports')
  const ports = ((): PortPicker => {
    try {
      return new PortPicker(portsText === undefined ? null : parsePortRange(portsText))
    } catch (error) {
      return args.refuse(error instanceof Error ? error.message : String(error))
    }
  })()
  // wrk takes whole seconds only.
  return {
    scenarios,
    durationSeconds: args.integer('duration', 5, 0),
    connections: args.integer('connections', 50, 0),
    records: args.integer('records', DEFAULT_RECORDS, 0),
    tool,
    warmupSeconds: args.integer('warmup', 1, 0),
    skip,
    profile: args.flag('profile'),
    autoSnapshots: args.flag('auto-snapshots'),
    ports,
  }
}

// ---------------------------------------------------------------- helpers

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function snapshotNames(dataDir: string, tenant: string): Set<string> {
  const dir = path.join(dataDir, 'snapshots', tenant)
  return new Set(fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => name.endsWith('.tlsnap')) : [])
}

/** SHA-256 (first 12 hex digits) of every file under src/ and grammar/: which engine a run measured (no git here). */
function sourceFingerprint(): string {
  const root = fileURLToPath(new URL('../../', import.meta.url))
  const hash = crypto.createHash('sha256')
  for (const dir of ['src', 'grammar']) {
    for (const file of (fs.readdirSync(path.join(root, dir), { recursive: true }) as string[]).sort()) {
      const full = path.join(root, dir, file)
      if (fs.statSync(full).isFile()) hash.update(file).update(fs.readFileSync(full))
    }
  }
  return hash.digest('hex').slice(0, 12)
}

function log(message: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`)
}

// ---------------------------------------------------------------- steps

/** PORT and ADMIN_PORT of a server of the run (--ports). */
async function serverPorts(ports: PortPicker): Promise<Record<string, string>> {
  return { PORT: String(await ports.next()), ADMIN_PORT: String(await ports.next()) }
}

async function measureEmptyServer(ports: PortPicker): Promise<{ startupMs: number; rssBytes: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-bench-empty-'))
  try {
    const server = await startServer({ dataDir, env: await serverPorts(ports) })
    await sleep(1500)
    const rssBytes = server.rssBytes()
    await server.stop()
    return { startupMs: server.startupMs, rssBytes }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

async function runScenario(scenario: Scenario, context: ScenarioContext, options: RunOptions, baselines: BaselineReport | null, dataDir: string, serverPid: number): Promise<ScenarioResult> {
  const load = scenarioLoad(scenario, context, options.connections, options.tool)
  const connections = load.connections
  const answer = await checkScenarioOnce(scenario, context)
  if (options.warmupSeconds > 0) await runLoad({ ...load, durationSeconds: options.warmupSeconds })
  const before = snapshotNames(dataDir, context.fixture.tenant)
  const result = await withCpuPerRequest(serverPid, () => runLoad({ ...load, durationSeconds: options.durationSeconds }))
  const after = snapshotNames(dataDir, context.fixture.tenant)
  const measured = scenarioResult(scenario.name, scenario.description, scenario.kind, connections, options, result, baselines, [...after].filter((name) => !before.has(name)).length)
  if (scenario.largeAnswer === true && !options.skip.has('baselines'))
    measured.sameBytes = await sameBytesOf(scenario.name, answer, measured, {
      connections,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      tool: options.tool,
      ports: options.ports,
    })
  return measured
}

/** Bare uWS answering `answer` under the scenario's load, compared with the scenario. */
async function sameBytesOf(name: string, answer: string, measured: ScenarioResult, baselineOptions: BaselineOptions): Promise<SameBytesFigure> {
  const bodyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-same-bytes-'))
  try {
    const bodyFile = path.join(bodyDir, `${name}.json`)
    fs.writeFileSync(bodyFile, answer)
    const figure = await measureSameBytes(baselineOptions, name, bodyFile)
    const cpuRatio = figure.cpuMicrosPerRequest === null || measured.cpuMicrosPerRequest === null ? null : figure.cpuMicrosPerRequest / measured.cpuMicrosPerRequest
    log(`${figure.name}: ${figure.requestsPerSecond.toFixed(0)} req/s (${Buffer.byteLength(answer)} bytes)`)
    return { bytes: Buffer.byteLength(answer), figure, ratio: measured.requestsPerSecond / figure.requestsPerSecond, cpuRatio }
  } finally {
    fs.rmSync(bodyDir, { recursive: true, force: true })
  }
}

function scenarioResult(
  name: string,
  description: string,
  kind: Scenario['kind'],
  connections: number,
  options: RunOptions,
  result: LoadResult & { cpuMicrosPerRequest: number | null },
  baselines: BaselineReport | null,
  snapshotsWritten: number,
): ScenarioResult {
  const baseline = kind === 'read' ? 'bare-get' : 'lmdb-put'
  const baselineFigure = baselines?.figures.find((figure) => figure.name === baseline)
  const ratio = baselineFigure === undefined ? null : result.requestsPerSecond / baselineFigure.requestsPerSecond
  const baselineCpu = baselineFigure?.cpuMicrosPerRequest ?? null
  const cpuRatio = baselineCpu === null || result.cpuMicrosPerRequest === null ? null : baselineCpu / result.cpuMicrosPerRequest
  if (result.requests === 0) log(`${name}: NO response within the load tool's timeout (wrk: 2 s) — the server is slower than connections × 2 s`)
  log(
    `${name}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms (${result.tool}, ${connections} conns, ${result.non2xx} non-2xx, ${result.errors} errors)`,
  )
  return { name, description, kind, connections, durationSeconds: options.durationSeconds, baseline, ratio, cpuRatio, snapshotsWritten, sameBytes: null, ...result }
}

async function runMixed(port: number, options: RunOptions, baselines: BaselineReport | null, serverPid: number): Promise<ScenarioResult> {
  const client = new BenchClient(port)
  log(`mixed: signing up ${MIXED_TENANTS} tenants over HTTP …`)
  const tenants = await createSmallTenants(client, MIXED_TENANTS).finally(() => client.close())
  const deck = mixedDeck(tenants, port)
  if (options.warmupSeconds > 0) await runDeck(options.tool, port, deck, options.connections, options.warmupSeconds)
  const result = await withCpuPerRequest(serverPid, () => runDeck(options.tool, port, deck, options.connections, options.durationSeconds))
  const description = `${MIXED_TENANTS} tenants, 90% reads (project, list of 20, users/@self) / 10% POST time record, random tenant per request`
  return scenarioResult('mixed', description, 'read', options.connections, options, result, baselines, 0)
}

async function runEngineFigures(records: number): Promise<EngineFigures> {
  const script = fileURLToPath(new URL('./engineFigures.js', import.meta.url))
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', script, '--records', String(records)], { maxBuffer: 64 * 1024 * 1024, timeout: 30 * 60_000 })
  const line = stdout.split('\n').find((text) => text.startsWith('ENGINE_FIGURES '))
  if (line === undefined) throw new Error(`engineFigures printed no figures:\n${stdout}`)
  return JSON.parse(line.slice('ENGINE_FIGURES '.length)) as EngineFigures
}

function printProfile(dir: string): void {
  for (const file of fs.readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'))) {
    const { totalMs, functions } = summarizeProfile(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')))
    console.log(`\nserver CPU profile ${path.join(dir, file)} (${totalMs.toFixed(0)} ms sampled), top self time:`)
    for (const row of functions.sort((a, b) => b.selfMs - a.selfMs).slice(0, 25)) {
      console.log(`${row.selfMs.toFixed(0).padStart(8)} ms ${((100 * row.selfMs) / totalMs).toFixed(1).padStart(5)}%  ${row.name}`)
    }
  }
}

// ---------------------------------------------------------------- the run

async function runAgainstServer(
  options: RunOptions,
  fixture: FixtureInfo,
  baselines: BaselineReport | null,
  emptyServer: { startupMs: number; rssBytes: number } | null,
  report: RunReport,
  profileDir: string | null,
): Promise<void> {
  const dataDir = copyFixture(options.records)
  let server: BenchServer | null = null
  try {
    log(`starting the server on a copy of the fixture (${dataDir})`)
    const env = { ...(options.autoSnapshots ? {} : NO_AUTO_SNAPSHOTS), ...(await serverPorts(options.ports)) }
    server = await startServer({ dataDir, env, ...(profileDir === null ? {} : { cpuProfileDir: profileDir }) })
    const port = server.port
    const client = new BenchClient(port)
    const first = await ownerLogin(client, fixture)
    client.close()
    log(`listening after ${server.startupMs.toFixed(0)} ms; first login (activates the tenant) ${first.ms.toFixed(0)} ms`)
    const context = scenarioContext(port, first.token, fixture)
    report.fixture.listProjectRecords = context.project.records
    const rssSamples: number[] = []
    if (!options.skip.has('memory')) {
      await sleep(3000)
      rssSamples.push(server.rssBytes())
    }
    if (!options.skip.has('times')) {
      log('single-request server times …')
      report.serverTimes = await measureServerTimes(context)
    }
    for (const scenario of SCENARIOS.filter((candidate) => options.scenarios.includes(candidate.name))) {
      if (scenario.kind === 'write' && rssSamples.length === 1 && !options.skip.has('memory')) rssSamples.push(server.rssBytes())
      report.scenarios.push(await runScenario(scenario, context, options, baselines, dataDir, server.pid))
    }
    if (!options.skip.has('batch')) {
      report.batchVsSingle = await measureBatchVsSingle(context)
      log(`batch vs single: ${report.batchVsSingle.batchMedianMs.toFixed(1)} ms vs ${report.batchVsSingle.singleMedianMs.toFixed(1)} ms`)
    }
    if (options.scenarios.includes('mixed')) report.scenarios.push(await runMixed(port, options, baselines, server.pid))
    if (emptyServer !== null && rssSamples.length > 0) {
      const loadedRssBytes = Math.min(...rssSamples)
      const perRecord = (loadedRssBytes - emptyServer.rssBytes) / fixture.records
      report.server = {
        emptyStartupMs: emptyServer.startupMs,
        emptyRssBytes: emptyServer.rssBytes,
        startupMs: server.startupMs,
        firstRequestMs: first.ms,
        loadedRssBytes,
        rssSamples,
        bytesPerRecordResident: perRecord,
        rssPerMillionRecordsBytes: perRecord * 1_000_000,
      } satisfies ServerFigures
    }
    log('stopping the server (a clean stop snapshots every active tenant) …')
    await server.stop()
  } finally {
    await server?.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2)
  const options = parseOptions(argv)
  fs.mkdirSync(RESULTS_DIR, { recursive: true })
  const at = new Date().toISOString()
  const stamp = at.replace(/[:.]/g, '-')
  const fixture = await ensureFixture(options.records)
  const cpus = os.cpus()
  const report: RunReport = {
    at,
    command: ['npm run bench --', ...argv].join(' '),
    sourceFingerprint: sourceFingerprint(),
    machine: { cpuModel: cpus[0]?.model ?? 'unknown', cpus: cpus.length, node: process.version },
    options: { records: options.records, durationSeconds: options.durationSeconds, connections: options.connections, tool: options.tool, scenarios: options.scenarios },
    fixture: { records: fixture.records, generationMs: fixture.generationMs, snapshotBytes: fixture.snapshotBytes, listProjectRecords: 0 },
    baselines: null,
    server: null,
    scenarios: [],
    serverTimes: [],
    batchVsSingle: null,
    engine: null,
    targets: [],
  }
  if (!options.skip.has('baselines')) {
    log('baselines …')
    report.baselines = await measureBaselines({
      connections: options.connections,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      tool: options.tool,
      ports: options.ports,
    })
    for (const figure of report.baselines.figures) log(`${figure.name}: ${figure.requestsPerSecond.toFixed(0)} req/s, p99 ${figure.p99Ms.toFixed(2)} ms`)
  }
  const emptyServer = options.skip.has('memory') ? null : await measureEmptyServer(options.ports)
  const profileDir = options.profile ? path.join(RESULTS_DIR, `profile-${stamp}`) : null
  await runAgainstServer(options, fixture, report.baselines, emptyServer, report, profileDir)
  if (!options.skip.has('engine')) {
    log('engine figures (recovery, heap, snapshot, replay) in a separate process …')
    report.engine = await runEngineFigures(options.records)
  }
  report.targets = evaluateTargets({
    baselines: report.baselines,
    scenarios: report.scenarios,
    bytesPerRecordResident: report.server?.bytesPerRecordResident ?? null,
    engine: report.engine,
    batchVsSingle: report.batchVsSingle,
    serverTimes: report.serverTimes,
  })
  const markdown = markdownReport(report)
  console.log(`\n${markdown}`)
  fs.writeFileSync(path.join(RESULTS_DIR, `run-${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`)
  fs.writeFileSync(path.join(RESULTS_DIR, `run-${stamp}.md`), markdown)
  console.log(`wrote ${path.join(RESULTS_DIR, `run-${stamp}.json`)} (and .md)`)
  if (profileDir !== null) printProfile(profileDir)
}

await main()
