/*
 * The change feed under load (issue 30): N WebSocket subscribers spread
 * over the tenants of one embedded node, and writes to those tenants. Two
 * figures, each against its target:
 *
 *   ack→event   for every write and every subscriber of its tenant, the time from the write's
 *               acknowledgement (its answer read by the writer) to its event read by the
 *               subscriber: p50/p90/p99/max over all (write, subscriber) pairs (target p99 < 20 ms).
 *               Events often come before their acknowledgement (the server sends them in the
 *               turn the entry became durable, before or with the answers); those count as 0 and
 *               are counted. Beside it, request sent → event, which includes the write itself.
 *   writes/s    with the subscribers (run B) against the same writers with none (run A)
 *               (target B/A ≥ 0.8)
 *
 * The real server runs as a child (serverProcess.ts) on a fresh DATA_DIR,
 * automatic snapshots off; 100 tenants are signed up with an owner each
 * (cheap password hashing: logins are not measured). The writers run in a
 * process of their own (changeWriters.ts: keep-alive sockets POSTing
 * projects round-robin over the tenants), the subscribers in
 * `--subscriber-processes` others (changeSubscribers.ts); both stamp their
 * times with `performance.timeOrigin + performance.now()`. The POST answer
 * carries the object's `id`, as does its event, so writes and events are
 * matched by id. Each subscriber must get every measured write of its
 * tenant exactly once, in order: what is missing, doubled, unexpected or
 * out of order is counted and reported (and fails the target).
 *
 * Before a measurement with subscribers, all of them must be live: a
 * sentinel project is written to every tenant (again, while some
 * subscriber has not got it) until every subscriber got its tenant's
 * latest one; then the counts are reset. After the writers stop, the
 * subscribers are given until every expected event arrived (or no event
 * came for DRAIN_IDLE_MS) before the figures are taken. Runs A and B
 * alternate (A B, then B A, …) because this machine's speed drifts within
 * minutes; each subscriber count is measured in its own rounds. With
 * `--rate` the writers are paced, for the latency at a load the server
 * carries (the writes/s then say only whether it kept up).
 *
 *   npx tsc -p . && node dist/bench/changes.js [--subscribers 1000,10000] [--tenants 100]
 *     [--subscriber-processes 2] [--writers 50] [--duration 10] [--rate n] [--rounds 2] [--profile] [--ports 9100-9199] [--cli …]
 */
import { fork, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SubscriberAnswer, SubscriberRequest, SubscriberStatus, Subscription, Collected } from './changeSubscribers.js'
import type { TenantAcks, WriterJob, WriterResult } from './changeWriters.js'
import { scriptArgs } from './cliOptions.js'
import { BenchClient, withQuery } from './httpClient.js'
import { signUpAndLogin } from './mixedLoad.js'
import { parsePortRange, PortPicker } from './portRange.js'
import { processCpuMicros, processCpuSplitMicros } from './processCpu.js'
import { summarizeProfile } from './profileSummary.js'
import { NO_AUTO_SNAPSHOTS, startServer, UNLIMITED_FEED, type BenchServer } from './serverProcess.js'

const P99_TARGET_MS = 20
const RATIO_TARGET = 0.8
/** Handshakes in flight per subscriber process. */
const CONNECT_CONCURRENCY = 100
const READY_TIMEOUT_MS = 120_000
/** How long a sentinel round may take to reach every subscriber before another is written. */
const SENTINEL_WAIT_MS = 3_000
const DRAIN_IDLE_MS = 5_000
const POLL_MS = 100

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Tenant {
  tenant: string
  token: string
}

// ---------------------------------------------------------------- child processes

function forkChild(file: string, role: string): ChildProcess {
  return fork(fileURLToPath(new URL(file, import.meta.url)), [role], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
}

/** A subscriber process, asked one request at a time per ticket. */
class SubscriberProcess {
  private readonly child = forkChild('./changeSubscribers.js', 'subscriber-process')
  private readonly waiting = new Map<number, { resolve: (answer: SubscriberAnswer) => void; reject: (error: Error) => void }>()
  private ticket = 0

  constructor() {
    this.child.on('message', (answer: SubscriberAnswer) => {
      const waiter = this.waiting.get(answer.ticket)
      this.waiting.delete(answer.ticket)
      if (answer.kind === 'failed') waiter?.reject(new Error(`subscriber process: ${answer.message}`))
      else waiter?.resolve(answer)
    })
    this.child.on('exit', (code) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`subscriber process exited with ${code}`))
      this.waiting.clear()
    })
  }

  get pid(): number {
    return this.child.pid as number
  }

  ask<K extends SubscriberRequest['kind']>(
    request: Omit<Extract<SubscriberRequest, { kind: K }>, 'ticket'>,
  ): Promise<Extract<SubscriberAnswer, { kind: K extends 'connect' ? 'connected' : K extends 'collect' ? 'collected' : K extends 'close' ? 'closed' : K }>> {
    this.ticket += 1
    const ticket = this.ticket
    return new Promise((resolve, reject) => {
      this.waiting.set(ticket, { resolve: resolve as (answer: SubscriberAnswer) => void, reject })
      this.child.send({ ...request, ticket })
    })
  }

  stop(): void {
    this.child.disconnect()
  }
}

class WriterProcess {
  private readonly child = forkChild('./changeWriters.js', 'writer-process')

  get pid(): number {
    return this.child.pid as number
  }

  run(job: Omit<WriterJob, 'kind'>): Promise<WriterResult> {
    return new Promise((resolve, reject) => {
      this.child.once('message', (answer: WriterResult | { kind: 'failed'; message: string }) => {
        if (answer.kind === 'failed') reject(new Error(`writer process: ${answer.message}`))
        else resolve(answer)
      })
      this.child.send({ ...job, kind: 'write' })
    })
  }

  stop(): void {
    this.child.disconnect()
  }
}

// ---------------------------------------------------------------- figures

function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] as number
}

function cpuOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + (processCpuMicros(pid) ?? Number.NaN), 0)
}

function systemCpuOf(pid: number): number {
  return processCpuSplitMicros(pid)?.system ?? Number.NaN
}

function openFiles(pid: number): number {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length
  } catch {
    return Number.NaN
  }
}

function openFilesLimit(pid: number): string {
  try {
    const line = fs
      .readFileSync(`/proc/${pid}/limits`, 'utf8')
      .split('\n')
      .find((text) => text.startsWith('Max open files'))
    const [soft, hard] = (line ?? '').replace('Max open files', '').trim().split(/\s+/)
    return `${soft}/${hard}`
  } catch {
    return '?'
  }
}

interface Run {
  subscribers: number
  round: number
  withSubscribers: boolean
  writes: number
  writesPerSecond: number
  postP50Ms: number
  postP99Ms: number
  /** CPU cores used from the first write to the end of the drain (1 = one core all the time). */
  serverCores: number
  writerCores: number
  subscriberCores: number
  serverCpuMicrosPerWrite: number
  /** The share of the server's CPU spent in the kernel (system calls; on loopback the receiving TCP side too). */
  serverSystemShare: number
  /** Events delivered per write: the subscribers of a written tenant (0 without subscribers). */
  eventsPerWrite: number
  /** From the writers' end until the last expected event arrived (or the drain gave up). */
  drainMs: number
  events?: {
    count: number
    p50: number
    p90: number
    p99: number
    max: number
    /** Request sent → event, p50 / p99 (the write's own latency included). */
    sendP50: number
    sendP99: number
    negative: number
    mostNegativeMs: number
    missing: number
    subscribersMissing: number
    duplicates: number
    unexpected: number
    outOfOrder: number
    /** Close codes seen before the benchmark closed the sockets itself. */
    closedByServer: Record<string, number>
    connectMs: number
    readyMs: number
  }
}

// ---------------------------------------------------------------- the benchmark

class FeedBench {
  private readonly client: BenchClient

  constructor(
    private readonly server: BenchServer,
    private readonly tenants: readonly Tenant[],
    private readonly writer: WriterProcess,
    private readonly subscriberProcesses: readonly SubscriberProcess[],
    private readonly writers: number,
    private readonly durationMs: number,
    private readonly rate: number,
  ) {
    this.client = new BenchClient(server.port)
  }

  close(): void {
    this.client.close()
  }

  /** One project per tenant; their ids by tenant index. */
  private async writeSentinels(): Promise<string[]> {
    const ids: string[] = []
    for (const { tenant, token } of this.tenants) {
      const answer = await this.client.expect(201, 'POST', withQuery('/v1/time/projects', { token }), { tenant, body: JSON.stringify({ name: 'feed bench sentinel' }) })
      ids.push(answer.json.id as string)
    }
    return ids
  }

  private async statuses(sentinels?: string[]): Promise<SubscriberStatus[]> {
    return Promise.all(this.subscriberProcesses.map((child) => child.ask<'status'>({ kind: 'status', ...(sentinels === undefined ? {} : { sentinels }) })))
  }

  /** Writes sentinels until every subscriber got its tenant's latest one; the events so far are then forgotten. */
  private async waitUntilLive(count: number): Promise<void> {
    const deadline = performance.now() + READY_TIMEOUT_MS
    for (;;) {
      const sentinels = await this.writeSentinels()
      const roundEnd = performance.now() + SENTINEL_WAIT_MS
      let saw = 0
      while (performance.now() < roundEnd) {
        saw = (await this.statuses(sentinels)).reduce((sum, status) => sum + status.sawSentinel, 0)
        if (saw === count) {
          await Promise.all(this.subscriberProcesses.map((child) => child.ask<'reset'>({ kind: 'reset' })))
          return
        }
        await sleep(POLL_MS)
      }
      if (performance.now() > deadline) throw new Error(`after ${READY_TIMEOUT_MS} ms only ${saw} of ${count} subscribers got their tenant's latest sentinel event`)
    }
  }

  private async write(): Promise<{ result: WriterResult; started: number }> {
    const started = performance.now()
    const result = await this.writer.run({ port: this.server.port, tenants: this.tenants, connections: this.writers, durationMs: this.durationMs, rate: this.rate })
    if (result.failures > 0) throw new Error(`${result.failures} writes failed, the first: ${result.firstFailure ?? '?'}`)
    if (result.writes === 0) throw new Error('no write was acknowledged')
    return { result, started }
  }

  private figures(subscribers: number, round: number, result: WriterResult, wallMs: number, cpu: { server: number; serverSystem: number; writer: number; subscribers: number }, drainMs: number): Run {
    const requestMs = result.requestMs.slice().sort()
    return {
      subscribers,
      round,
      withSubscribers: false,
      writes: result.writes,
      writesPerSecond: (result.writes * 1000) / result.elapsedMs,
      postP50Ms: percentile(requestMs, 0.5),
      postP99Ms: percentile(requestMs, 0.99),
      serverCores: cpu.server / 1000 / wallMs,
      writerCores: cpu.writer / 1000 / wallMs,
      subscriberCores: cpu.subscribers / 1000 / wallMs,
      serverCpuMicrosPerWrite: cpu.server / result.writes,
      serverSystemShare: cpu.serverSystem / cpu.server,
      eventsPerWrite: 0,
      drainMs,
    }
  }

  /** Run A: the writers alone. */
  async withoutSubscribers(subscribers: number, round: number): Promise<Run> {
    const pids = { server: [this.server.pid], writer: [this.writer.pid], subscribers: this.subscriberProcesses.map((child) => child.pid) }
    const before = { server: cpuOf(pids.server), serverSystem: systemCpuOf(this.server.pid), writer: cpuOf(pids.writer), subscribers: cpuOf(pids.subscribers) }
    const { result, started } = await this.write()
    const wallMs = performance.now() - started
    const cpu = {
      server: cpuOf(pids.server) - before.server,
      serverSystem: systemCpuOf(this.server.pid) - before.serverSystem,
      writer: cpuOf(pids.writer) - before.writer,
      subscribers: cpuOf(pids.subscribers) - before.subscribers,
    }
    return this.figures(subscribers, round, result, wallMs, cpu, 0)
  }

  /** Run B: `count` subscribers, spread evenly over the tenants and the subscriber processes. */
  async withSubscribers(count: number, round: number, report: (line: string) => void): Promise<Run> {
    const perProcess: Subscription[][] = this.subscriberProcesses.map(() => [])
    const perTenant = new Array<number>(this.tenants.length).fill(0)
    for (let index = 0; index < count; index += 1) {
      const tenantIndex = index % this.tenants.length
      const { tenant, token } = this.tenants[tenantIndex] as Tenant
      perTenant[tenantIndex] = (perTenant[tenantIndex] as number) + 1
      ;(perProcess[index % perProcess.length] as Subscription[]).push({ tenantIndex, tenant, token })
    }
    const connectStarted = performance.now()
    const connected = await Promise.all(
      this.subscriberProcesses.map((child, index) =>
        child.ask<'connect'>({ kind: 'connect', port: this.server.port, subscriptions: perProcess[index] as Subscription[], concurrency: CONNECT_CONCURRENCY }),
      ),
    )
    const connectMs = performance.now() - connectStarted
    try {
      const failed = connected.reduce((sum, answer) => sum + answer.failed, 0)
      if (failed > 0) throw new Error(`${failed} of ${count} subscribers could not connect, e.g. ${connected.find((answer) => answer.firstFailure !== null)?.firstFailure ?? '?'}`)
      const fds = `server ${openFiles(this.server.pid)} (limit ${openFilesLimit(this.server.pid)}), subscriber processes ${this.subscriberProcesses.map((child) => `${openFiles(child.pid)} (limit ${openFilesLimit(child.pid)})`).join(', ')}`
      report(`${count} subscribers connected in ${(connectMs / 1000).toFixed(1)} s; open files: ${fds}`)
      const readyStarted = performance.now()
      await this.waitUntilLive(count)
      const readyMs = performance.now() - readyStarted

      const pids = { server: [this.server.pid], writer: [this.writer.pid], subscribers: this.subscriberProcesses.map((child) => child.pid) }
      const before = { server: cpuOf(pids.server), serverSystem: systemCpuOf(this.server.pid), writer: cpuOf(pids.writer), subscribers: cpuOf(pids.subscribers) }
      const { result, started } = await this.write()
      const wroteAt = performance.now()
      const expected = result.acks.reduce((sum, tenant, index) => sum + tenant.ids.length * (perTenant[index] as number), 0)
      let received = -1
      let lastChange = performance.now()
      let lastStatus: SubscriberStatus[] = []
      for (;;) {
        lastStatus = await this.statuses()
        const now = lastStatus.reduce((sum, status) => sum + status.received, 0)
        if (now !== received) {
          received = now
          lastChange = performance.now()
        }
        if (received >= expected || performance.now() - lastChange > DRAIN_IDLE_MS) break
        await sleep(POLL_MS)
      }
      const drainMs = (received >= expected ? lastChange : performance.now()) - wroteAt
      const wallMs = performance.now() - started
      const cpu = {
        server: cpuOf(pids.server) - before.server,
        serverSystem: systemCpuOf(this.server.pid) - before.serverSystem,
        writer: cpuOf(pids.writer) - before.writer,
        subscribers: cpuOf(pids.subscribers) - before.subscribers,
      }
      const run = this.figures(count, round, result, wallMs, cpu, drainMs)
      run.eventsPerWrite = count / this.tenants.length

      const collected = await Promise.all(this.subscriberProcesses.map((child) => child.ask<'collect'>({ kind: 'collect', acks: result.acks as TenantAcks[] })))
      const sum = (field: keyof Omit<Collected, 'latencies'>) => collected.reduce((total, part) => total + (part[field] as number), 0)
      const merged = (field: 'latencies' | 'fromSend') => {
        const all = new Float64Array(collected.reduce((total, part) => total + part[field].length, 0))
        let at = 0
        for (const part of collected) {
          all.set(part[field], at)
          at += part[field].length
        }
        return all.sort()
      }
      const sorted = merged('latencies')
      const fromSend = merged('fromSend')
      const filled = sorted.length
      const closedByServer: Record<string, number> = {}
      for (const status of lastStatus) for (const [code, times] of Object.entries(status.closes)) closedByServer[code] = (closedByServer[code] ?? 0) + times
      run.withSubscribers = true
      run.events = {
        count: filled,
        p50: percentile(sorted, 0.5),
        p90: percentile(sorted, 0.9),
        p99: percentile(sorted, 0.99),
        max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
        sendP50: percentile(fromSend, 0.5),
        sendP99: percentile(fromSend, 0.99),
        negative: sum('negative'),
        mostNegativeMs: Math.min(...collected.map((part) => part.mostNegativeMs)),
        missing: sum('missing'),
        subscribersMissing: sum('subscribersMissing'),
        duplicates: sum('duplicates'),
        unexpected: sum('unexpected'),
        outOfOrder: sum('outOfOrder'),
        closedByServer,
        connectMs,
        readyMs,
      }
      return run
    } finally {
      await Promise.all(this.subscriberProcesses.map((child) => child.ask<'close'>({ kind: 'close' })))
    }
  }
}

// ---------------------------------------------------------------- output

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '–')
const whole = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–')
const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length)

function runRow(run: Run): string {
  const events = run.events
  const correctness = events === undefined ? '' : `${events.missing} / ${events.duplicates} / ${events.unexpected} / ${events.outOfOrder}`
  const closes =
    events === undefined
      ? ''
      : Object.entries(events.closedByServer)
          .map(([code, times]) => `${code}×${times}`)
          .join(' ') || 'none'
  return [
    run.subscribers.toLocaleString('en-US'),
    run.round,
    run.withSubscribers ? 'B' : 'A',
    whole(run.writesPerSecond),
    `${fixed(run.postP50Ms)} / ${fixed(run.postP99Ms)}`,
    events === undefined ? '' : whole(events.count),
    events === undefined ? '' : `${fixed(events.p50)} / ${fixed(events.p90)} / **${fixed(events.p99)}** / ${fixed(events.max)}`,
    events === undefined ? '' : `${fixed(events.sendP50)} / ${fixed(events.sendP99)}`,
    events === undefined ? '' : `${events.negative} (${fixed(events.mostNegativeMs, 2)} ms)`,
    correctness,
    closes,
    events === undefined ? '' : fixed(run.drainMs / 1000, 1),
    `${fixed(run.serverCores, 2)} / ${fixed(run.writerCores, 2)} / ${fixed(run.subscriberCores, 2)}`,
    fixed(run.serverCpuMicrosPerWrite, 0),
    `${fixed(100 * run.serverSystemShare, 0)} %`,
  ].join(' | ')
}

function printRuns(runs: readonly Run[]): void {
  console.log(
    '| subscribers | round | run | writes/s | POST p50 / p99 ms | events | ack→event p50 / p90 / p99 / max ms | sent→event p50 / p99 ms | negative (most) | missing / dup / unexpected / out of order | closed by server | drain s | CPU cores server / writers / subscribers | server CPU µs per write | server CPU in the kernel |',
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const run of runs) console.log(`| ${runRow(run)} |`)
}

function printVerdicts(runs: readonly Run[], counts: readonly number[], paced: boolean): void {
  console.log(
    '\n| subscribers | writes/s A (mean) | writes/s B (mean) | B/A | server CPU µs per event | worst p99 ack→event ms | worst POST p99 ms A / B | every event once, in order | target p99 < 20 ms | target B/A ≥ 0.8 |',
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const count of counts) {
    const a = runs.filter((run) => run.subscribers === count && !run.withSubscribers)
    const b = runs.filter((run) => run.subscribers === count && run.withSubscribers)
    if (a.length === 0 || b.length === 0) continue
    const ratio = mean(b.map((run) => run.writesPerSecond)) / mean(a.map((run) => run.writesPerSecond))
    // What the events added to a write's server CPU, spread over the events of a write.
    const perEvent = (mean(b.map((run) => run.serverCpuMicrosPerWrite)) - mean(a.map((run) => run.serverCpuMicrosPerWrite))) / mean(b.map((run) => run.eventsPerWrite))
    const postP99 = `${fixed(Math.max(...a.map((run) => run.postP99Ms)))} / ${fixed(Math.max(...b.map((run) => run.postP99Ms)))}`
    const worstP99 = Math.max(...b.map((run) => run.events?.p99 ?? Number.NaN))
    const complete = b.every(
      (run) => run.events !== undefined && run.events.missing + run.events.duplicates + run.events.unexpected + run.events.outOfOrder === 0 && Object.keys(run.events.closedByServer).length === 0,
    )
    console.log(
      `| ${count.toLocaleString('en-US')} | ${whole(mean(a.map((run) => run.writesPerSecond)))} | ${whole(mean(b.map((run) => run.writesPerSecond)))} | ${fixed(ratio, 2)} | ${fixed(perEvent, 2)} | ${fixed(worstP99)} | ${postP99} | ${complete ? 'yes' : '**no**'} | ${complete && worstP99 < P99_TARGET_MS ? 'met' : '**not met**'} | ${paced ? 'not measured (writes paced)' : complete && ratio >= RATIO_TARGET ? 'met' : '**not met**'} |`,
    )
  }
}

function printProfile(dir: string): void {
  for (const file of fs.readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'))) {
    const { totalMs, functions } = summarizeProfile(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')))
    console.log(`\nServer CPU profile ${path.join(dir, file)}: ${fixed(totalMs / 1000)} s sampled`)
    for (const key of ['selfMs', 'totalMs'] as const) {
      console.log(`\n${key === 'selfMs' ? 'self' : 'inclusive'} time, top 30:`)
      for (const row of [...functions].sort((x, y) => y[key] - x[key]).slice(0, 30)) console.log(`${fixed(row[key], 0).padStart(8)} ms ${fixed((100 * row[key]) / totalMs).padStart(5)}%  ${row.name}`)
    }
  }
}

// ---------------------------------------------------------------- main

const args = scriptArgs({
  usage: 'npm run bench:changes -- [options]     (or: node dist/bench/changes.js [options])',
  about:
    'The change feed under load: WebSocket subscribers spread over the tenants of a fresh server while writers POST\n' +
    'projects to them; reports ack→event latency and writes/s with and without subscribers (see the top of changes.ts).',
  options: {
    subscribers: { value: 'a,b', help: 'subscriber counts, each measured in its own rounds, spread evenly over the tenants (default 1000,10000)' },
    tenants: { value: 'n', help: 'tenants signed up on the fresh server (default 100)' },
    'subscriber-processes': { value: 'n', help: 'processes the subscribers are spread over (default 2)' },
    writers: { value: 'n', help: 'writer connections (one process), POSTing projects round-robin over the tenants (default 50)' },
    duration: { value: 's', help: 'seconds each run writes (default 10)' },
    rate: { value: 'n', help: 'pace the writers to n writes/s in all (default: as fast as the answers come), for the\nlatency at a load the server carries' },
    rounds: { value: 'n', help: 'rounds per subscriber count, each one run A (no subscribers) and one B; the order alternates (default 2)' },
    profile: { help: 'run the server with --cpu-prof and print where its time went (the whole run)' },
    ports: { value: 'first-last', help: 'the server listens on ports of this range (default: any free port)' },
    cli: { value: 'path/to/cli.js', help: "the server to run (default: this tree's dist/src/cli.js), e.g. an older build" },
  },
})
const countsText = args.text('subscribers') ?? '1000,10000'
const counts = countsText.split(',').map((text) => Number(text))
if (counts.some((count) => !Number.isSafeInteger(count) || count <= 0)) args.refuse('--subscribers takes positive integers separated by commas')
const tenantCount = args.positiveInteger('tenants', 100)
const processCount = args.positiveInteger('subscriber-processes', 2)
const writers = args.positiveInteger('writers', 50)
const durationSeconds = args.positiveInteger('duration', 10)
const rounds = args.positiveInteger('rounds', 2)
const rate = args.text('rate') === undefined ? 0 : args.positiveInteger('rate', 1)
const profile = args.flag('profile')
const portsText = args.text('ports')
const cli = args.text('cli')
const picker = portsText === undefined ? null : new PortPicker(parsePortRange(portsText))

const report = (line: string) => console.error(`${new Date().toISOString().slice(11, 19)} ${line}`)
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-changes-'))
const profileDir = profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'bench-changes-profile-')) : undefined
const ports: Record<string, string> = picker === null ? {} : { PORT: String(await picker.next()), ADMIN_PORT: String(await picker.next()) }
const server = await startServer({
  dataDir,
  env: { ...NO_AUTO_SNAPSHOTS, ...UNLIMITED_FEED, PASSWORD_HASH_MEMORY_KIB: '1024', PASSWORD_HASH_PASSES: '1', ...ports },
  ...(profileDir === undefined ? {} : { cpuProfileDir: profileDir }),
  ...(cli === undefined ? {} : { cli }),
})
const subscriberProcesses = Array.from({ length: processCount }, () => new SubscriberProcess())
const writer = new WriterProcess()
const runs: Run[] = []
let bench: FeedBench | undefined
try {
  report(
    `server pid ${server.pid} on port ${server.port}, data in ${dataDir}; ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load ${os
      .loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}`,
  )
  report(
    `open files allowed: this process ${openFilesLimit(process.pid)}, server ${openFilesLimit(server.pid)}, ephemeral ports ${fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().replace(/\s+/, '–')}`,
  )
  const setup = new BenchClient(server.port)
  const tenants: Tenant[] = []
  for (let index = 0; index < tenantCount; index += 1) {
    const tenant = `feed${index}`
    tenants.push({ tenant, token: await signUpAndLogin(setup, tenant) })
  }
  setup.close()
  report(`${tenantCount} tenants signed up`)
  bench = new FeedBench(server, tenants, writer, subscriberProcesses, writers, durationSeconds * 1000, rate)
  for (const count of counts) {
    for (let round = 1; round <= rounds; round += 1) {
      const order = round % 2 === 1 ? ['A', 'B'] : ['B', 'A']
      for (const which of order) {
        const run = which === 'A' ? await bench.withoutSubscribers(count, round) : await bench.withSubscribers(count, round, report)
        runs.push(run)
        report(`${count} subscribers, round ${round}, run ${which} (load ${os.loadavg()[0]?.toFixed(1)}): ${runRow(run)}`)
      }
    }
  }
} finally {
  bench?.close()
  for (const child of subscriberProcesses) child.stop()
  writer.stop()
  await server.stop()
  fs.rmSync(dataDir, { recursive: true, force: true })
}
console.log(
  `${tenantCount} tenants, ${writers} writer connections${rate > 0 ? ` paced to ${rate} writes/s` : ''}, ${durationSeconds} s per run, ${rounds} round(s) per subscriber count, ${processCount} subscriber processes\n`,
)
printRuns(runs)
printVerdicts(runs, counts, rate > 0)
if (profileDir !== undefined) printProfile(profileDir)
