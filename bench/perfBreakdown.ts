/*
 * Where each microsecond of a hot path goes (issue 39), by Linux perf: the
 * real server (`cli.js serve`, a child process) on a copy of the fixture,
 * with Node's perf map (--perf-basic-prof, and interpreted frames on the
 * native stack), its tenant activated by a login, each scenario warmed up;
 * then, per scenario, `perf record -g` on the server's pid while wrk drives
 * it, and the server's CPU per request read around the same load
 * (processCpu.ts). The samples are split into phases (perfPhases.ts) and
 * each phase's share is turned into microseconds per request. perf sees
 * what the V8 profiler calls "(idle)" (uWS runs its handlers inside
 * libuv's poll), the kernel's work for the process (the send and recv
 * system calls, the TCP stack of the loopback they run) and LMDB's writer
 * thread.
 *
 *   node dist/bench/perfBreakdown.js [--scenario project,list,list-noexpand,post]
 *        [--records 100000] [--duration 5] [--rounds 2] [--connections 50]
 *        [--no-inlining] [--no-baselines]
 *
 * The raw-stack baselines (bare uWS GET, one flushed LMDB put per POST:
 * baselines/) are profiled the same way in the same rounds, each round
 * going through all of them and the scenarios in turn, so that the ratios
 * (a scenario's CPU per request over its baseline's, printed at the end)
 * are of the same minutes. For each read scenario, bare uWS answering that
 * scenario's own bytes (`same-bytes:<scenario>`) is profiled too: the
 * ceiling for an answer of that size (the page with references is 300 KB).
 *
 * --no-inlining runs the server with --no-turbo-inlining: TurboFan then
 * keeps every function a frame of its own, so a small function inlined
 * into its caller (the token check into the router's signedIn, the query
 * parser into serve) gets its own samples, at the price of a slower
 * server; read its split, not its total. Needs `perf` (linux-perf) and
 * permission to profile another process (root, or perf_event_paranoid ≤ 1).
 * Prints a table per scenario and one of all of them, and writes them to
 * bench/results/perf-breakdown-<time>.json.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { scriptArgs, type ScriptArgs, type ScriptDoc } from './cliOptions.js'
import { copyFixture } from './fixture.js'
import { ensureFixture } from './generate.js'
import { BenchClient } from './httpClient.js'
import { BASELINE_POST_BODY, baselineScript } from './baselines.js'
import { runLoad, startProcess, wrkAvailable, type LoadOptions, type StartedProcess } from './loadgen.js'
import { phaseShares, readSamples, type PhaseShare, type Sample } from './perfPhases.js'
import { untilIdle, withCpuPerRequest } from './processCpu.js'
import { checkScenarioOnce, ownerLogin, scenarioContext, scenarioLoad, SCENARIOS, type ScenarioContext } from './scenarios.js'
import { NO_AUTO_SNAPSHOTS, startServer, type BenchServer } from './serverProcess.js'

const RESULTS_DIR = fileURLToPath(new URL('../../bench/results/', import.meta.url))
const SAMPLES_PER_SECOND = 1999
const PERF_FLAGS = '--perf-basic-prof --interpreted-frames-native-stack'

interface Breakdown {
  scenario: string
  cpuMicrosPerRequest: number
  requestsPerSecond: number
  samples: number
  phases: PhaseShare[]
}

function record(pid: number, file: string, seconds: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('perf', ['record', '-F', String(SAMPLES_PER_SECOND), '-g', '-o', file, '-p', String(pid), '--', 'sleep', String(seconds)], (error, _stdout, stderr) => {
      if (error !== null) reject(new Error(`perf record: ${stderr || error.message}`))
      else resolve()
    })
  })
}

function printBreakdown(breakdown: Breakdown): void {
  console.log(`\n${breakdown.scenario}: ${breakdown.cpuMicrosPerRequest.toFixed(1)} µs of server CPU per request, ${breakdown.requestsPerSecond.toFixed(0)} req/s, ${breakdown.samples} samples`)
  console.log('| phase | share | µs/request | mostly |')
  console.log('| --- | --- | --- | --- |')
  for (const phase of breakdown.phases) {
    const mostly = phase.top.map((top) => `${top.name} ${(top.share * breakdown.cpuMicrosPerRequest).toFixed(1)}`).join('; ')
    console.log(`| ${phase.phase} | ${(phase.share * 100).toFixed(1)} % | ${(phase.share * breakdown.cpuMicrosPerRequest).toFixed(1)} | ${mostly} |`)
  }
}

function printTogether(breakdowns: readonly Breakdown[]): void {
  const phases = [...new Set(breakdowns.flatMap((breakdown) => breakdown.phases.map((phase) => phase.phase)))]
  const micros = (breakdown: Breakdown, phase: string) => (breakdown.phases.find((candidate) => candidate.phase === phase)?.share ?? 0) * breakdown.cpuMicrosPerRequest
  phases.sort((a, b) => breakdowns.reduce((sum, breakdown) => sum + micros(breakdown, b), 0) - breakdowns.reduce((sum, breakdown) => sum + micros(breakdown, a), 0))
  console.log(`\n| µs of server CPU per request | ${breakdowns.map((breakdown) => breakdown.scenario).join(' | ')} |`)
  console.log(`| --- |${breakdowns.map(() => ' --- |').join('')}`)
  for (const phase of phases) console.log(`| ${phase} | ${breakdowns.map((breakdown) => micros(breakdown, phase).toFixed(1)).join(' | ')} |`)
  console.log(`| **all** | ${breakdowns.map((breakdown) => `**${breakdown.cpuMicrosPerRequest.toFixed(1)}**`).join(' | ')} |`)
}

interface Target {
  name: string
  pid: number
  load: Omit<LoadOptions, 'durationSeconds'>
}

/** Profiles `target` for `seconds` under its load; the samples and the CPU and requests of the load. */
async function profileOnce(target: Target, file: string, seconds: number): Promise<{ samples: Sample[]; cpuMicros: number; requests: number; seconds: number }> {
  // perf starts a moment after the load and stops before it ends: it sees the load only.
  const profiled = new Promise((resolve) => setTimeout(resolve, 300)).then(() => record(target.pid, file, seconds))
  const measured = await withCpuPerRequest(target.pid, () => runLoad({ ...target.load, durationSeconds: seconds + 1 }))
  await profiled
  await untilIdle(target.pid)
  if (measured.cpuMicrosPerRequest === null) throw new Error(`${target.name}: no CPU figure`)
  return { samples: readSamples(file), cpuMicros: measured.cpuMicrosPerRequest * measured.requests, requests: measured.requests, seconds: seconds + 1 }
}

const PERF_BREAKDOWN_DOC: ScriptDoc = {
  usage: 'node dist/bench/perfBreakdown.js [options]',
  about: `Where each microsecond of a hot path goes: perf on the real server, the bare uWS GET, bare uWS sending each read
scenario's own bytes and the one-put-per-request LMDB server, in the same rounds; each scenario's samples split into
phases (perfPhases.ts) and turned into microseconds per request. Needs perf (linux-perf). Writes
bench/results/perf-breakdown-<time>.json.`,
  options: {
    scenario: { value: 'a,b', help: 'scenarios (default project,list,list-noexpand,post)' },
    records: { value: 'n', help: 'time records of the fixture (default 100000)' },
    duration: { value: 's', help: 'profiled seconds per scenario and round (default 5)' },
    rounds: { value: 'n', help: 'rounds through every scenario and baseline (default 2)' },
    connections: { value: 'n', help: 'connections of the load tool (default 50)' },
    'no-inlining': { help: 'run the server with --no-turbo-inlining: each function its own frame (read the split, not the total)' },
    'no-baselines': { help: 'profile the scenarios only' },
  },
}

async function main(): Promise<void> {
  const args: ScriptArgs = scriptArgs(PERF_BREAKDOWN_DOC)
  const names = (args.text('scenario') ?? 'project,list,list-noexpand,post').split(',')
  const scenarios = names.map((name) => {
    const scenario = SCENARIOS.find((candidate) => candidate.name === name)
    if (scenario === undefined) args.refuse(`unknown scenario '${name}'; scenarios: ${SCENARIOS.map((candidate) => candidate.name).join(', ')}`)
    return scenario
  })
  const records = args.positiveInteger('records', 100_000)
  const seconds = args.positiveInteger('duration', 5)
  const rounds = args.positiveInteger('rounds', 2)
  const connections = args.positiveInteger('connections', 50)
  const noInlining = args.flag('no-inlining')
  const noBaselines = args.flag('no-baselines')
  const tool = wrkAvailable() ? 'wrk' : 'autocannon'
  const fixture = await ensureFixture(records)
  const dataDir = copyFixture(records, 'perf')
  const lmdbDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lmdb-put-baseline-'))
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-perf-'))
  const nodeOptions = `${PERF_FLAGS}${noInlining ? ' --no-turbo-inlining' : ''}`
  const baselines: StartedProcess[] = []
  const maps: number[] = []
  let server: BenchServer | null = null
  try {
    server = await startServer({ dataDir, env: NO_AUTO_SNAPSHOTS, nodeArgs: nodeOptions.split(' ') })
    maps.push(server.pid)
    const client = new BenchClient(server.port)
    const { token } = await ownerLogin(client, fixture)
    client.close()
    const reads = scenarioContext(server.port, token, fixture)
    // The POST writes on another project than the one the list reads, as in the guard.
    const writes: ScenarioContext = { ...reads, project: fixture.projects.find((project) => project.id !== reads.project.id) ?? reads.project }
    const targets: Target[] = []
    if (!noBaselines) {
      const bare = await startProcess(process.execPath, [...nodeOptions.split(' '), baselineScript('bareGetServer.js'), '0'])
      const lmdb = await startProcess(process.execPath, [...nodeOptions.split(' '), baselineScript('lmdbPutServer.js'), '0', lmdbDir])
      baselines.push(bare, lmdb)
      maps.push(bare.pid, lmdb.pid)
      const url = (port: number) => `http://127.0.0.1:${port}/api/projects`
      targets.push({ name: 'bare-get', pid: bare.pid, load: { url: url(bare.port), method: 'GET', connections, pipelining: 1, tool } })
      targets.push({
        name: 'lmdb-put',
        pid: lmdb.pid,
        load: { url: url(lmdb.port), method: 'POST', body: BASELINE_POST_BODY, headers: { 'Content-Type': 'application/json' }, connections, pipelining: 1, tool },
      })
    }
    for (const scenario of scenarios) {
      const answer = await checkScenarioOnce(scenario, scenario.kind === 'write' ? writes : reads)
      targets.push({ name: scenario.name, pid: server.pid, load: scenarioLoad(scenario, scenario.kind === 'write' ? writes : reads, connections, tool) })
      if (scenario.kind === 'write' || noBaselines) continue
      // Bare uWS answering this scenario's own bytes: the ceiling for an answer of that size.
      const bodyFile = path.join(work, `${scenario.name}.json`)
      fs.writeFileSync(bodyFile, answer)
      const same = await startProcess(process.execPath, [...nodeOptions.split(' '), baselineScript('bareGetServer.js'), '0', bodyFile])
      baselines.push(same)
      maps.push(same.pid)
      targets.push({ name: `same-bytes:${scenario.name}`, pid: same.pid, load: { url: `http://127.0.0.1:${same.port}/api/projects`, method: 'GET', connections, pipelining: 1, tool } })
    }
    for (const target of targets) {
      await runLoad({ ...target.load, durationSeconds: 3 })
      await untilIdle(target.pid)
    }
    const loadAtStart = os.loadavg()
    console.log(`load average ${loadAtStart.map((load) => load.toFixed(1)).join(' ')} (1, 5, 15 min); ${os.cpus().length} CPUs; node ${process.version}${noInlining ? '; --no-turbo-inlining' : ''}`)
    const gathered = new Map(targets.map((target) => [target.name, { samples: [] as Sample[], cpuMicros: 0, requests: 0, seconds: 0 }]))
    for (let round = 0; round < rounds; round += 1) {
      for (const target of targets) {
        const once = await profileOnce(target, path.join(work, `${target.name}.data`), seconds)
        const sum = gathered.get(target.name) as { samples: Sample[]; cpuMicros: number; requests: number; seconds: number }
        sum.samples.push(...once.samples)
        sum.cpuMicros += once.cpuMicros
        sum.requests += once.requests
        sum.seconds += once.seconds
      }
      console.log(`round ${round + 1}/${rounds} done, load average ${os.loadavg()[0]?.toFixed(1)}`)
    }
    const breakdowns: Breakdown[] = targets.map((target) => {
      const sum = gathered.get(target.name) as { samples: Sample[]; cpuMicros: number; requests: number; seconds: number }
      return { scenario: target.name, cpuMicrosPerRequest: sum.cpuMicros / sum.requests, requestsPerSecond: sum.requests / sum.seconds, samples: sum.samples.length, phases: phaseShares(sum.samples) }
    })
    for (const breakdown of breakdowns) printBreakdown(breakdown)
    printTogether(breakdowns)
    const bareGet = breakdowns.find((breakdown) => breakdown.scenario === 'bare-get')
    const lmdbPut = breakdowns.find((breakdown) => breakdown.scenario === 'lmdb-put')
    if (bareGet !== undefined && lmdbPut !== undefined) {
      console.log('')
      for (const breakdown of breakdowns.filter((candidate) => SCENARIOS.some((scenario) => scenario.name === candidate.scenario))) {
        const against = SCENARIOS.find((scenario) => scenario.name === breakdown.scenario)?.kind === 'write' ? lmdbPut : bareGet
        const same = breakdowns.find((candidate) => candidate.scenario === `same-bytes:${breakdown.scenario}`)
        const sameText = same === undefined ? '' : `, ${(breakdown.cpuMicrosPerRequest / same.cpuMicrosPerRequest).toFixed(2)}× its same bytes from bare uWS`
        console.log(`${breakdown.scenario}: ${(breakdown.cpuMicrosPerRequest / against.cpuMicrosPerRequest).toFixed(2)}× ${against.scenario}'s CPU per request${sameText}`)
      }
    }
    fs.mkdirSync(RESULTS_DIR, { recursive: true })
    const out = path.join(RESULTS_DIR, `perf-breakdown-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
    fs.writeFileSync(
      out,
      `${JSON.stringify({ at: new Date().toISOString(), records, seconds, rounds, connections, noInlining, loadAverage: { atStart: loadAtStart, atEnd: os.loadavg() }, breakdowns }, null, 2)}\n`,
    )
    console.log(`\nwrote ${out}`)
  } finally {
    await server?.stop(0)
    await Promise.all(baselines.map((baseline) => baseline.stop()))
    for (const dir of [work, dataDir, lmdbDir]) fs.rmSync(dir, { recursive: true, force: true })
    for (const pid of maps) fs.rmSync(`/tmp/perf-${pid}.map`, { force: true })
  }
}

await main()
