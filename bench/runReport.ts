/*
 * A benchmark run as data (RunReport, written as JSON) and as Markdown
 * tables (printed, and pasted into bench/RESULTS.md): baselines, load
 * scenarios with their ratio to the matching baseline, single-request
 * server times, engine figures, and the targets with met / missed.
 */
import type { BaselineFigure, BaselineReport } from './baselines.js'
import type { EngineFigures } from './engineFigures.js'
import type { LoadResult } from './loadgen.js'
import type { ScenarioKind } from './scenarios.js'
import type { BatchVsSingle, QueryTime } from './serverTimes.js'
import type { TargetResult } from './targets.js'

export interface ScenarioResult extends LoadResult {
  name: string
  description: string
  kind: ScenarioKind
  connections: number
  durationSeconds: number
  baseline: 'bare-get' | 'lmdb-put'
  /** requests/s divided by the baseline's requests/s. */
  ratio: number | null
  /** The server's CPU time per request (processCpu.ts). */
  cpuMicrosPerRequest: number | null
  /** The baseline's CPU time per request divided by this scenario's: the throughput ratio with the machine's noise taken out. */
  cpuRatio: number | null
  /** Snapshot files of the tenant that appeared while the scenario ran. */
  snapshotsWritten: number
  /** For a scenario with a large answer: bare uWS answering the same bytes, under the same load. */
  sameBytes: SameBytesFigure | null
}

export interface SameBytesFigure {
  /** Size of one answer of the scenario. */
  bytes: number
  figure: BaselineFigure
  /** The scenario's requests/s divided by the same-bytes server's. */
  ratio: number
  /** The same-bytes server's CPU per request divided by the scenario's. */
  cpuRatio: number | null
}

export interface ServerFigures {
  emptyStartupMs: number
  emptyRssBytes: number
  startupMs: number
  /** The first request: it activates (recovers) the tenant inside the server. */
  firstRequestMs: number
  loadedRssBytes: number
  rssSamples: number[]
  bytesPerRecordResident: number
  rssPerMillionRecordsBytes: number
}

export interface RunReport {
  at: string
  command: string
  /** Hash of src/ and grammar/ at the start of the run. */
  sourceFingerprint: string
  machine: { cpuModel: string; cpus: number; node: string }
  options: { records: number; durationSeconds: number; connections: number; tool: string; scenarios: string[] }
  fixture: { records: number; generationMs: number; snapshotBytes: number; listProjectRecords: number }
  baselines: BaselineReport | null
  server: ServerFigures | null
  scenarios: ScenarioResult[]
  serverTimes: QueryTime[]
  batchVsSingle: BatchVsSingle | null
  engine: EngineFigures | null
  targets: TargetResult[]
}

const n0 = (value: number): string => value.toLocaleString('en', { maximumFractionDigits: 0 })
const n2 = (value: number): string => value.toFixed(2)
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n')
}

const cpuText = (micros: number | null | undefined): string => (micros === null || micros === undefined ? '—' : micros.toFixed(1))
const percentText = (ratio: number | null | undefined): string => (ratio === null || ratio === undefined ? '—' : `${(ratio * 100).toFixed(0)}%`)

function baselineTable(report: BaselineReport): string {
  return table(
    ['baseline', 'what', 'tool', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req'],
    report.figures.map((f) => [f.name, f.description, f.tool, String(f.connections), n0(f.requestsPerSecond), n2(f.p50Ms), n2(f.p99Ms), cpuText(f.cpuMicrosPerRequest)]),
  )
}

function scenarioTable(scenarios: readonly ScenarioResult[]): string {
  return table(
    ['scenario', 'tool', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'vs baseline', 'server CPU µs/req', 'by CPU', 'errors', 'non-2xx', 'snapshots'],
    scenarios.map((s) => [
      s.name,
      s.tool,
      String(s.connections),
      n0(s.requestsPerSecond),
      s.requests === 0 ? 'timeout' : n2(s.p50Ms),
      s.requests === 0 ? 'timeout' : n2(s.p99Ms),
      s.ratio === null ? '—' : `${(s.ratio * 100).toFixed(0)}% of ${s.baseline}`,
      cpuText(s.cpuMicrosPerRequest),
      percentText(s.cpuRatio),
      String(s.errors),
      String(s.non2xx),
      String(s.snapshotsWritten),
    ]),
  )
}

function timesTable(times: readonly QueryTime[]): string {
  return table(
    ['query', 'answer', 'server min ms', 'server median ms', 'server max ms', 'wall min ms', 'wall median ms', 'target'],
    times.map((t) => [`${t.name}: ${t.description}`, t.answer, n2(t.minMs), n2(t.medianMs), n2(t.maxMs), n2(t.wallMinMs), n2(t.wallMedianMs), t.targetMs === undefined ? '' : `< ${t.targetMs} ms`]),
  )
}

function engineRows(report: RunReport): string[][] {
  const rows: string[][] = []
  const server = report.server
  if (server !== null) {
    rows.push(['server start-up to listening (empty data dir)', `${n0(server.emptyStartupMs)} ms`])
    rows.push(['server start-up to listening (with the fixture; tenants load lazily)', `${n0(server.startupMs)} ms`])
    rows.push(['first request on the tenant (activates it: snapshot load)', `${n0(server.firstRequestMs)} ms`])
    rows.push(['RSS empty server / loaded server', `${mb(server.emptyRssBytes)} / ${mb(server.loadedRssBytes)}`])
    rows.push(['resident memory per 1,000,000 time records (RSS delta, scaled)', `${mb(server.rssPerMillionRecordsBytes)} (${n0(server.bytesPerRecordResident)} B/record)`])
  }
  const engine = report.engine
  if (engine !== null) {
    rows.push(['memory of the loaded tenant per time record (V8 heap + ArrayBuffers, after full GC)', `${n0(engine.heapBytesPerRecord)} B`])
    rows.push(['the snapshot’s records as decoded, objects and strings (before repeated texts are shared)', `${n0(engine.decodedRecordBytesPerRecord)} B`])
    rows.push(['recovery from snapshot (in-process, no log after it)', `${n0(engine.recoveryMs)} ms`])
    rows.push(['snapshot: synchronous part (collect the records; blocks the event loop)', `${n0(engine.snapshotSyncMs)} ms`])
    rows.push(['snapshot: total (encode, hash and write a slice at a time, fsync, rename, prune) / size', `${n0(engine.snapshotTotalMs)} ms / ${mb(engine.snapshotBytes)}`])
    rows.push(['snapshot: most resident memory above the loaded tenant during it', mb(engine.snapshotPeakRssBytes)])
    rows.push([
      `in-process durable single-record writes (${n0(engine.writeEntries)}, group commit) / the longest one write changed the state`,
      `${n0(engine.writesPerSecond)} /s / ${engine.writeLongestMs.toFixed(1)} ms`,
    ])
    rows.push([`log replay (${n0(engine.replayEntries)} single-record entries after the snapshot; a new process, as after a restart)`, `${n0(engine.replayPerSecond)} commands/s`])
    rows.push(['recovery: snapshot + those log entries', `${n0(engine.recoveryWithLogMs)} ms`])
    rows.push([
      'the same, a slice per event-loop turn as a server activates a tenant: total / longest the event loop was held',
      `${n0(engine.activationInTurnsMs)} ms / ${n0(engine.activationLongestStallMs)} ms`,
    ])
  }
  const batch = report.batchVsSingle
  if (batch !== null) {
    rows.push([
      `100 creations: one batch vs 100 single POSTs on one connection (median of ${batch.rounds})`,
      `${n2(batch.batchMedianMs)} ms vs ${n2(batch.singleMedianMs)} ms = ${batch.speedup.toFixed(1)}×`,
    ])
  }
  return rows
}

function sameBytesTable(scenarios: readonly ScenarioResult[]): string {
  return table(
    ['scenario', 'answer bytes', 'req/s', 'same bytes from bare uWS, req/s', 'ratio', 'server CPU µs/req', 'bare uWS CPU µs/req', 'by CPU'],
    scenarios.flatMap((s) =>
      s.sameBytes === null
        ? []
        : [
            [
              s.name,
              n0(s.sameBytes.bytes),
              n0(s.requestsPerSecond),
              n0(s.sameBytes.figure.requestsPerSecond),
              percentText(s.sameBytes.ratio),
              cpuText(s.cpuMicrosPerRequest),
              cpuText(s.sameBytes.figure.cpuMicrosPerRequest),
              percentText(s.sameBytes.cpuRatio),
            ],
          ],
    ),
  )
}

function targetTable(targets: readonly TargetResult[]): string {
  return table(
    ['target', 'measured', 'verdict'],
    targets.map((t) => [t.target, t.measured, t.verdict === 'met' ? '**met**' : t.verdict === 'missed' ? '**missed**' : t.verdict]),
  )
}

export function markdownReport(report: RunReport): string {
  const parts = [
    `Run ${report.at} — ${report.machine.cpuModel}, ${report.machine.cpus} CPUs, node ${report.machine.node}`,
    `\`${report.command}\` — source ${report.sourceFingerprint} — ${n0(report.options.records)} time records, ${report.options.durationSeconds} s per scenario, ${report.options.connections} connections, tool ${report.options.tool}`,
  ]
  if (report.baselines !== null) parts.push('### Baselines', baselineTable(report.baselines))
  if (report.scenarios.length > 0) parts.push('### Load scenarios', scenarioTable(report.scenarios))
  const large = report.scenarios.filter((s) => s.sameBytes !== null)
  if (large.length > 0) parts.push('### Large answers against bare uWS answering the same bytes', sameBytesTable(large))
  if (report.serverTimes.length > 0)
    parts.push('### Single requests (one connection, 20 requests after 1 warm-up; server time from the Server-Timing header, wall time at the client)', timesTable(report.serverTimes))
  const engine = engineRows(report)
  if (engine.length > 0) parts.push('### Engine figures', table(['figure', 'value'], engine))
  parts.push('### Targets', targetTable(report.targets))
  return `${parts.join('\n\n')}\n`
}
