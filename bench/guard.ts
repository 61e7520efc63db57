/*
 * The hot-path guard (issue 39): is this build's server slower per request
 * than another commit's on the hot paths?
 *
 *   npm run bench:guard -- --against <git ref> [--rounds 8] [--duration 0.5] [--scenario a,b] …
 *
 * 1. The ref is built in a temporary git worktree (refWorktree.ts) while
 *    this build's fixture is made or reused (bench/data/<records>/).
 * 2. The ref's server starts on a copy of this build's fixture. When it
 *    cannot serve it (another data format: it exits or its login fails),
 *    the ref generates its own fixture with its own generator in its
 *    worktree: the data format may differ between commits, the data may
 *    not. Both generators draw the tenant from the same seeded PRNG
 *    (dataset.ts); the run checks that both made the same shape (records
 *    per project) and refuses otherwise.
 * 3. Both servers start (automatic snapshots and the request rate limit
 *    off, as in every benchmark), their tenants are activated by a login,
 *    and every scenario is checked once and warmed up on both.
 * 4. Rounds: in each, every scenario runs on both builds back to back, the
 *    load tool (wrk) for --duration seconds each, and the server process's
 *    own CPU time per answered request is read from /proc (processCpu.ts).
 *    After each load the server is let finish the requests that were in
 *    flight (untilIdle) before anything else is measured. Which build goes
 *    first alternates from one scenario and round to the next. Both
 *    servers run throughout; the one not under load is idle.
 * 5. Per scenario the rounds' ratios, this build over the ref, are
 *    summarized and judged by guardVerdict.ts; the table goes to stdout
 *    (progress to stderr), and the exit code is the verdict: 0 no scenario
 *    is more than 10 % slower beyond its spread, 1 at least one is, 2 the
 *    run could not judge (a bad option or ref, a build, a generator or a
 *    server that failed).
 *
 * Short rounds and many of them: the ratio of a pair of half-second loads
 * varies about as much as that of a pair of 2-second loads on the shared
 * VM (the machine's speed moves within a second too), so in a fixed time
 * more, shorter rounds give the narrower spread.
 *
 * The POST scenario writes its records on another project than the one
 * the list and count scenarios read (typicalProject), so the records it
 * adds (as many as the build is fast) change no read's answer or cost.
 * Ctrl-C (SIGINT) or SIGTERM stops the servers and the build, removes the
 * worktree and the data copies, and exits 130 (143).
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { scriptArgs, type ScriptArgs, type ScriptDoc } from './cliOptions.js'
import { copyFixture, readFixtureInfo, type FixtureInfo } from './fixture.js'
import { ensureFixture } from './generate.js'
import { CONFIDENCE, SLOWER_LIMIT, summarizeRatios, verdictOf, type RatioSummary, type Verdict } from './guardVerdict.js'
import { BenchClient } from './httpClient.js'
import { runLoad, wrkAvailable, type LoadTool } from './loadgen.js'
import { untilIdle, withCpuPerRequest } from './processCpu.js'
import { REPO_ROOT, RefWorktree, type RefBuild } from './refWorktree.js'
import { checkScenarioOnce, ownerLogin, scenarioContext, scenarioLoad, SCENARIOS, type Scenario, type ScenarioContext } from './scenarios.js'
import { NO_AUTO_SNAPSHOTS, startServer, type BenchServer } from './serverProcess.js'

const GUARD_SCENARIOS = ['self', 'project', 'list', 'list-noexpand', 'count', 'readtotals', 'post']
const DEFAULTS = { rounds: 8, duration: 0.5, records: 100_000, connections: 50, warmup: 0.5 }
/** Below this a round's load is mostly wrk starting and connecting. */
const LEAST_DURATION_SECONDS = 0.2

const GUARD_DOC: ScriptDoc = {
  usage: 'npm run bench:guard -- --against <git ref> [options]     (or: node dist/bench/guard.js …)',
  about: `Builds <git ref> in a temporary git worktree, then runs it and this build alternately on the hot paths, each on
the same generated data, and prints per scenario the server's CPU time per request of this build over the ref's:
the Hodges–Lehmann estimate of the rounds' ratios and its spread (the signed-rank confidence interval, at least
${CONFIDENCE * 100} % from 5 rounds on; with fewer, the rounds' min–max). A scenario is SLOWER when the whole spread is above
${1 + SLOWER_LIMIT}, ok when it is at or below ${1 + SLOWER_LIMIT}, unclear otherwise (too wide to rule out a ${SLOWER_LIMIT * 100} % regression).
Exit code 0: no scenario SLOWER; 1: at least one; 2: the run could not judge.

The ref's worktree links this checkout's node_modules when its package-lock.json is the same, and runs its own
npm ci otherwise (a minute or more).`,
  options: {
    against: { value: 'ref', help: 'the commit to compare with: a branch, tag or commit id of this repository (required)' },
    rounds: { value: 'n', help: `rounds; each runs every scenario once on each build, back to back (default ${DEFAULTS.rounds})` },
    duration: { value: 's', help: `measured seconds per scenario, build and round; fractions allowed, at least\n${LEAST_DURATION_SECONDS} (default ${DEFAULTS.duration})` },
    scenario: {
      value: 'a,b',
      help: `scenarios (default: ${GUARD_SCENARIOS.join(',')}); also: ${SCENARIOS.map((scenario) => scenario.name)
        .filter((name) => !GUARD_SCENARIOS.includes(name))
        .join(', ')}`,
    },
    records: { value: 'n', help: `time records of the generated tenant (default ${DEFAULTS.records}: the list scenarios' project\nthen has 200, so their page holds 100)` },
    connections: { value: 'n', help: `connections of the load tool (default ${DEFAULTS.connections})` },
    warmup: { value: 's', help: `unmeasured load per scenario and build before the rounds; 0: none (default ${DEFAULTS.warmup})` },
  },
}

interface GuardOptions {
  against: string
  rounds: number
  durationSeconds: number
  scenarios: string[]
  records: number
  connections: number
  warmupSeconds: number
}

/** The options (cliOptions.ts: --help prints the usage and a line the guard does not take exits 2, before anything runs). */
function guardOptions(argv: readonly string[]): GuardOptions {
  const args: ScriptArgs = scriptArgs(GUARD_DOC, argv)
  const against = args.text('against')
  if (against === undefined || against === '') args.refuse('--against <git ref> is required')
  const number = (name: keyof typeof DEFAULTS, least: number, whole: boolean) => {
    const text = args.text(name)
    const value = text === undefined ? DEFAULTS[name] : Number(text)
    if (!Number.isFinite(value) || (whole && !Number.isSafeInteger(value)) || value < least) args.refuse(`--${name} must be ${whole ? 'an integer' : 'a number'} of at least ${least}, got '${text}'`)
    return value
  }
  const known = SCENARIOS.map((scenario) => scenario.name)
  const scenarios = (args.text('scenario') ?? GUARD_SCENARIOS.join(','))
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  for (const name of scenarios) if (!known.includes(name)) args.refuse(`unknown scenario '${name}'; scenarios: ${known.join(', ')}`)
  if (scenarios.length === 0) args.refuse('--scenario names no scenario')
  return {
    against,
    rounds: number('rounds', 1, true),
    durationSeconds: number('duration', LEAST_DURATION_SECONDS, false),
    scenarios,
    records: number('records', 1, true),
    connections: number('connections', 1, true),
    warmupSeconds: number('warmup', 0, false),
  }
}

function log(message: string): void {
  console.error(`[guard ${new Date().toISOString().slice(11, 19)}] ${message}`)
}

const loadAverage = (): number => os.loadavg()[0] ?? 0

/** One build under test: its server, and the scenarios' contexts on its fixture. */
interface Side {
  label: string
  server: BenchServer
  /** The reads' context (typicalProject). */
  reads: ScenarioContext
  /** The POST's context: another project, so the records written change no read. */
  writes: ScenarioContext
}

function contextFor(side: Side, scenario: Scenario): ScenarioContext {
  return scenario.kind === 'write' ? side.writes : side.reads
}

/** Starts a server on `dataDir` and activates its tenant; `started` hears of the server at once (for Ctrl-C). */
async function startSide(label: string, dataDir: string, fixture: FixtureInfo, cli: string | undefined, started: (server: BenchServer) => void): Promise<Side> {
  const server = await startServer({ dataDir, env: NO_AUTO_SNAPSHOTS, ...(cli === undefined ? {} : { cli }) })
  started(server)
  const client = new BenchClient(server.port)
  try {
    const { token } = await ownerLogin(client, fixture)
    const reads = scenarioContext(server.port, token, fixture)
    const other = fixture.projects.find((project) => project.id !== reads.project.id)
    if (other === undefined) throw new Error('the fixture has a single project')
    return { label, server, reads, writes: { ...reads, project: other } }
  } finally {
    client.close()
  }
}

/** The same tenant from both generators, but for the ids: else the two builds would not do the same work. */
function sameShape(a: FixtureInfo, b: FixtureInfo): boolean {
  return (
    a.records === b.records && a.userIds.length === b.userIds.length && a.projects.length === b.projects.length && a.projects.every((project, index) => project.records === b.projects[index]?.records)
  )
}

class NoVerdict extends Error {}

interface Measurement {
  cpuMicrosPerRequest: number
  /** Answers that were not 2xx, and socket errors (wrk's timeouts among them). */
  bad: number
}

/** One load on one build; null when no request was answered in it (the machine stalled the server). */
async function measure(side: Side, scenario: Scenario, options: GuardOptions, tool: LoadTool, seconds: number): Promise<Measurement | null> {
  const load = scenarioLoad(scenario, contextFor(side, scenario), options.connections, tool)
  const result = await withCpuPerRequest(side.server.pid, () => runLoad({ ...load, durationSeconds: seconds }))
  // The requests still in flight when wrk stopped are this load's: they finish before anything else is measured.
  await untilIdle(side.server.pid)
  return result.cpuMicrosPerRequest === null ? null : { cpuMicrosPerRequest: result.cpuMicrosPerRequest, bad: result.non2xx + result.errors }
}

/** A scenario's rounds: CPU µs per request of each build, one pair per round in which both answered. */
interface Rounds {
  thisMicros: number[]
  refMicros: number[]
  bad: number
  /** Rounds without a figure for one of the builds. */
  dropped: number
}

interface ScenarioOutcome extends Rounds {
  scenario: string
  summary: RatioSummary
  verdict: Verdict
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

/** The report: a header, one line per scenario, then the verdict; what goes into a commit message. */
function guardReport(header: string, outcomes: readonly ScenarioOutcome[]): string {
  const rows = outcomes.map((outcome) => [
    outcome.scenario,
    median(outcome.thisMicros).toFixed(1),
    median(outcome.refMicros).toFixed(1),
    outcome.summary.ratio.toFixed(3),
    `${outcome.summary.low.toFixed(3)}–${outcome.summary.high.toFixed(3)}`,
    `${Math.round(outcome.summary.coverage * 100)} %`,
    outcome.verdict === 'slower' ? 'SLOWER' : outcome.verdict,
    [outcome.bad === 0 ? '' : `${outcome.bad} non-2xx/errors`, outcome.dropped === 0 ? '' : `${outcome.dropped} rounds without an answer`].filter((note) => note !== '').join(', '),
  ])
  const titles = ['scenario', 'this µs/req', 'ref µs/req', 'this/ref', 'spread', 'coverage', 'verdict', '']
  const widths = titles.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)))
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number)))
      .join('  ')
      .trimEnd()
  const named = (verdict: Verdict) => outcomes.filter((outcome) => outcome.verdict === verdict).map((outcome) => outcome.scenario)
  const lines = [header, line(titles), ...rows.map(line)]
  const slower = named('slower')
  const unclear = named('unclear')
  lines.push(
    slower.length > 0 ? `FAIL: more than ${SLOWER_LIMIT * 100} % slower beyond the spread: ${slower.join(', ')}` : `PASS: no scenario is more than ${SLOWER_LIMIT * 100} % slower beyond its spread`,
  )
  if (unclear.length > 0)
    lines.push(`unclear, the spread reaches past ${1 + SLOWER_LIMIT} (a ${SLOWER_LIMIT * 100} % regression is not ruled out; more --rounds or a quieter machine narrow it): ${unclear.join(', ')}`)
  return lines.join('\n')
}

/** `HEAD 1a2b3c4`, and whether the checkout has uncommitted changes: what "this build" is. */
function describeCheckout(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short=7', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim() !== ''
    return `HEAD ${head}${dirty ? ' + uncommitted changes' : ''}`
  } catch {
    return 'not a git checkout'
  }
}

/**
 * The ref's server: on a copy of this build's fixture when it can serve it (the same data, and no generation: the
 * common case, a ref whose data format is this build's), else on a fixture the ref's own generator makes in its
 * worktree, which must have the same shape as this build's.
 */
async function startRefSide(worktree: RefWorktree, ref: RefBuild, thisFixture: FixtureInfo, records: number, cleanups: (() => void)[], onStarted: (server: BenchServer) => void): Promise<Side> {
  const label = ref.commit.slice(0, 7)
  const copy = copyFixture(records, 'guard-ref')
  cleanups.push(() => fs.rmSync(copy, { recursive: true, force: true }))
  let tried: BenchServer | null = null
  try {
    return await startSide(label, copy, thisFixture, ref.cli, (server) => {
      tried = server
      onStarted(server)
    })
  } catch (error) {
    await (tried as BenchServer | null)?.stop(0)
    fs.rmSync(copy, { recursive: true, force: true })
    log(`${worktree.label()} cannot serve this build's fixture (${(error instanceof Error ? error.message : String(error)).split('\n')[0]}); it generates its own …`)
  }
  const generated = await worktree.run(process.execPath, [worktree.generator(), '--records', String(records)])
  const root = path.join(ref.dir, 'bench', 'data')
  const fixture = readFixtureInfo(records, root)
  if (generated.code !== 0 || fixture === null) throw new NoVerdict(`the generator of ${worktree.label()} failed (exit ${generated.code}):\n${generated.output.slice(-2000)}`)
  if (!sameShape(thisFixture, fixture)) throw new NoVerdict(`${worktree.label()}'s generator made another tenant than this build's (records per project differ): the builds would not do the same work`)
  return startSide(label, path.join(root, String(records), 'data'), fixture, ref.cli, onStarted)
}

/** Builds the ref, starts both servers and measures; the verdict's exit code. `cleanups` undo what it made. */
async function guard(opts: GuardOptions, cleanups: (() => void)[]): Promise<number> {
  const started = performance.now()
  const tool: LoadTool = wrkAvailable() ? 'wrk' : 'autocannon'
  let worktree: RefWorktree
  try {
    worktree = RefWorktree.add(opts.against)
  } catch (error) {
    throw new NoVerdict(error instanceof Error ? error.message : String(error))
  }
  cleanups.push(() => worktree.remove())
  const loadAtStart = loadAverage()
  log(`building ${worktree.label()} in ${worktree.dir}; this build's fixture of ${opts.records.toLocaleString('en')} records meanwhile (load average ${loadAtStart.toFixed(1)})`)
  const [ref, thisFixture] = await Promise.all([worktree.build(log), ensureFixture(opts.records)])
  log(`${worktree.label()} built in ${(ref.buildMs / 1000).toFixed(1)} s (node_modules ${ref.nodeModules}); both servers start …`)

  const sides: Side[] = []
  const onStarted = (server: BenchServer) => {
    cleanups.push(() => {
      try {
        process.kill(server.pid, 'SIGKILL') // the data is a throwaway copy: no clean stop (it would snapshot)
      } catch {
        // already exited
      }
    })
  }
  // Each side is checked and warmed up as soon as it is active: this build's while the ref still generates its data.
  const scenarios = SCENARIOS.filter((scenario) => opts.scenarios.includes(scenario.name))
  const warm = async (side: Side): Promise<Side> => {
    for (const scenario of scenarios) {
      await checkScenarioOnce(scenario, contextFor(side, scenario))
      if (opts.warmupSeconds > 0) await measure(side, scenario, opts, tool, opts.warmupSeconds)
    }
    return side
  }
  const thisData = copyFixture(opts.records, 'guard')
  cleanups.push(() => fs.rmSync(thisData, { recursive: true, force: true }))
  const thisSideReady = startSide('this', thisData, thisFixture, undefined, onStarted).then(warm)
  const refSideReady = startRefSide(worktree, ref, thisFixture, opts.records, cleanups, onStarted).then(warm)
  const settled = await Promise.allSettled([thisSideReady, refSideReady])
  for (const result of settled) if (result.status === 'rejected') throw result.reason
  for (const result of settled) if (result.status === 'fulfilled') sides.push(result.value)
  const [thisSide, refSide] = sides as [Side, Side]
  log(`both servers ready and warm after ${((performance.now() - started) / 1000).toFixed(0)} s; ${opts.rounds} rounds of ${scenarios.length} scenarios × 2 builds × ${opts.durationSeconds} s …`)

  const rounds = new Map<string, Rounds>(scenarios.map((scenario) => [scenario.name, { thisMicros: [], refMicros: [], bad: 0, dropped: 0 }]))
  const loads: number[] = []
  for (let round = 0; round < opts.rounds; round += 1) {
    const ratios: string[] = []
    for (const [index, scenario] of scenarios.entries()) {
      const entry = rounds.get(scenario.name) as Rounds
      const order = (round + index) % 2 === 0 ? [thisSide, refSide] : [refSide, thisSide]
      const pair = new Map<Side, Measurement | null>()
      for (const side of order) pair.set(side, await measure(side, scenario, opts, tool, opts.durationSeconds))
      const mine = pair.get(thisSide)
      const theirs = pair.get(refSide)
      entry.bad += (mine?.bad ?? 0) + (theirs?.bad ?? 0)
      if (mine === null || mine === undefined || theirs === null || theirs === undefined) {
        entry.dropped += 1
        ratios.push(`${scenario.name} –`)
        continue
      }
      entry.thisMicros.push(mine.cpuMicrosPerRequest)
      entry.refMicros.push(theirs.cpuMicrosPerRequest)
      ratios.push(`${scenario.name} ${(mine.cpuMicrosPerRequest / theirs.cpuMicrosPerRequest).toFixed(2)}`)
    }
    loads.push(loadAverage())
    log(`round ${round + 1}/${opts.rounds} (load average ${loadAverage().toFixed(1)}): this/ref ${ratios.join(', ')}`)
  }

  const outcomes = scenarios.map((scenario): ScenarioOutcome => {
    const entry = rounds.get(scenario.name) as Rounds
    if (entry.thisMicros.length === 0) throw new NoVerdict(`${scenario.name}: no round in which both builds answered`)
    const summary = summarizeRatios(entry.thisMicros.map((micros, round) => micros / (entry.refMicros[round] as number)))
    return { scenario: scenario.name, ...entry, summary, verdict: verdictOf(summary) }
  })
  const header = [
    `bench:guard: server CPU per request of this build (${describeCheckout()}) over ${worktree.label()}`,
    `${opts.rounds} rounds × ${opts.durationSeconds} s per scenario and build, ${tool} ${opts.connections} connections, ${opts.records.toLocaleString('en')} records;`,
    `load average ${loadAtStart.toFixed(1)} at the start, ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} during the rounds; ${((performance.now() - started) / 60_000).toFixed(1)} min in all`,
  ].join('\n')
  console.log(`\n${guardReport(header, outcomes)}`)
  const stops = sides.map((side) => side.server.stop(0))
  await Promise.all(stops)
  return outcomes.some((outcome) => outcome.verdict === 'slower') ? 1 : 0
}

async function main(): Promise<number> {
  const options = guardOptions(process.argv.slice(2))
  const cleanups: (() => void)[] = []
  const cleanUp = () => {
    for (let cleanup = cleanups.pop(); cleanup !== undefined; cleanup = cleanups.pop()) {
      try {
        cleanup()
      } catch (error) {
        log(`cleaning up: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  }
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping the servers and the build, removing the worktree and the data copies`)
      cleanUp()
      process.exit(code)
    })
  }
  try {
    return await guard(options, cleanups)
  } catch (error) {
    console.error(`bench:guard, no verdict: ${error instanceof NoVerdict ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    return 2
  } finally {
    cleanUp()
  }
}

process.exitCode = await main()
