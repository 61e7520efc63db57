/*
 * One measured load of the cluster benchmark (cluster.ts): a warm-up, then
 * the load, with the CPU of named groups of processes read from /proc
 * before and after (a server alone: processCpu.ts; PostgreSQL and HAProxy
 * with their children: processTreeCpu.ts) and the servers' /metrics read
 * around it: forwards between nodes, and the group commits (mean entries
 * per commit, mean time from a commit's first entry to its flush). Each
 * figure is divided by the requests the load tool counted. idleCpu reads
 * the same groups with no load: what they burn per second on their own.
 */
import type { LoadResult } from './loadgen.js'
import { processCpuMicros } from './processCpu.js'
import { processTreeCpuMicros } from './processTreeCpu.js'

export function clusterLog(message: string): void {
  console.log(`[cluster ${new Date().toISOString().slice(11, 19)}] ${message}`)
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface Measured {
  pid: number
  /** Count the process's children too (PostgreSQL, HAProxy). */
  tree: boolean
}

export interface LoadFigure extends LoadResult {
  /** CPU µs per request of each named process (group). */
  cpuMicrosPerRequest: Record<string, number | null>
  /** Requests forwarded between nodes during the load (cluster only). */
  forwards?: number
  /** Mean log entries per commit during the load, and the mean time from a commit's first entry to its flush (COMMIT returned). */
  entriesPerCommit?: number | null
  commitMs?: number | null
}

function cpuOf(processes: Record<string, Measured[]>): Record<string, number | null> {
  const out: Record<string, number | null> = {}
  for (const [name, members] of Object.entries(processes)) {
    let total = 0
    for (const { pid, tree } of members) {
      const micros = tree ? processTreeCpuMicros(pid) : processCpuMicros(pid)
      if (micros === null) return { ...out, [name]: null }
      total += micros
    }
    out[name] = total
  }
  return out
}

/** Runs `load` (after a warm-up run) with the CPU of `processes` and the cluster counters of `nodes` read around it. */
export async function measured(
  load: (seconds: number) => Promise<LoadResult>,
  durationSeconds: number,
  processes: Record<string, Measured[]>,
  nodes: readonly { metrics(): Promise<string> }[],
): Promise<LoadFigure> {
  await load(1)
  const metricsBefore = await Promise.all(nodes.map((node) => node.metrics()))
  const before = cpuOf(processes)
  const result = await load(durationSeconds)
  const after = cpuOf(processes)
  const metricsAfter = await Promise.all(nodes.map((node) => node.metrics()))
  const cpuMicrosPerRequest: Record<string, number | null> = {}
  for (const name of Object.keys(processes)) {
    const [b, a] = [before[name], after[name]]
    cpuMicrosPerRequest[name] = b === null || a === null || b === undefined || a === undefined || result.requests === 0 ? null : (a - b) / result.requests
  }
  const figure: LoadFigure = { ...result, cpuMicrosPerRequest }
  if (nodes.length > 0) {
    const delta = (name: string) => metricsAfter.reduce((sum, text, index) => sum + sample(text, name) - sample(metricsBefore[index] ?? '', name), 0)
    figure.forwards = delta('timeledger_cluster_forwards_total')
    const commits = delta('timeledger_log_commit_entries_count')
    figure.entriesPerCommit = commits === 0 ? null : delta('timeledger_log_commit_entries_sum') / commits
    const flushes = delta('timeledger_log_flush_duration_seconds_count')
    figure.commitMs = flushes === 0 ? null : (1000 * delta('timeledger_log_flush_duration_seconds_sum')) / flushes
  }
  return figure
}

/** The value of an unlabelled sample in Prometheus text (0 when absent). */
function sample(metrics: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{\\})? ([\\d.e+-]+)$`, 'm').exec(metrics)
  return match === null ? 0 : Number(match[1])
}

export function describe(name: string, figure: LoadFigure): void {
  const cpu = Object.entries(figure.cpuMicrosPerRequest)
    .map(([process, micros]) => `${process} ${micros === null ? '?' : micros.toFixed(0)} µs`)
    .join(', ')
  const extra = figure.forwards === undefined ? '' : `, ${figure.forwards} forwards, ${figure.entriesPerCommit?.toFixed(1) ?? '-'} entries/commit, ${figure.commitMs?.toFixed(1) ?? '-'} ms/commit`
  clusterLog(
    `${name}: ${figure.requestsPerSecond.toFixed(0)} req/s, p50 ${figure.p50Ms.toFixed(2)} ms, p99 ${figure.p99Ms.toFixed(2)} ms (${figure.non2xx} non-2xx, ${figure.errors} errors); CPU/request: ${cpu}${extra}`,
  )
}

/** One process, without its children. */
export const single = (pid: number): Measured[] => [{ pid, tree: false }]

/** How long the processes' CPU is read with no load. */
const IDLE_SAMPLE_MS = 5_000

/** CPU µs per second of each group with no load (leases, heartbeats, timers). */
export async function idleCpu(processes: Record<string, Measured[]>): Promise<Record<string, number | null>> {
  const before = cpuOf(processes)
  await sleep(IDLE_SAMPLE_MS)
  const after = cpuOf(processes)
  const out: Record<string, number | null> = {}
  for (const name of Object.keys(processes)) {
    const [b, a] = [before[name], after[name]]
    out[name] = b === null || a === null || b === undefined || a === undefined ? null : ((a - b) * 1000) / IDLE_SAMPLE_MS
  }
  return out
}
