/*
 * The targets of issue 10 (and the query-time targets of issues 3 and 6),
 * checked against a run's figures. Each target names what it compares, the
 * measured value as text, and met / missed / not measured (a run limited by
 * --scenario or --skip leaves some out).
 */
import type { BaselineReport } from './baselines.js'
import type { EngineFigures } from './engineFigures.js'
import type { BatchVsSingle, QueryTime } from './serverTimes.js'

export interface ScenarioFigure {
  name: string
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
}

export interface TargetInput {
  baselines: BaselineReport | null
  scenarios: readonly ScenarioFigure[]
  bytesPerRecordResident: number | null
  engine: EngineFigures | null
  batchVsSingle: BatchVsSingle | null
  serverTimes: readonly QueryTime[]
}

export type Verdict = 'met' | 'missed' | 'not measured'

export interface TargetResult {
  target: string
  measured: string
  verdict: Verdict
}

function verdictOf(value: number | null | undefined, holds: (value: number) => boolean): Verdict {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'not measured'
  return holds(value) ? 'met' : 'missed'
}

function baselineRps(input: TargetInput, name: 'bare-get' | 'lmdb-put'): number | null {
  return input.baselines?.figures.find((figure) => figure.name === name)?.requestsPerSecond ?? null
}

function ratio(scenario: ScenarioFigure | undefined, baseline: number | null): number | null {
  return scenario === undefined || baseline === null ? null : scenario.requestsPerSecond / baseline
}

const fixed = (value: number | null | undefined, digits: number, unit = ''): string => (value === null || value === undefined ? '—' : `${value.toFixed(digits)}${unit}`)

export function evaluateTargets(input: TargetInput): TargetResult[] {
  const scenario = (name: string) => input.scenarios.find((figure) => figure.name === name)
  const project = scenario('project')
  const post = scenario('post')
  const list = scenario('list')
  const getRatio = ratio(project, baselineRps(input, 'bare-get'))
  const postRatio = ratio(post, baselineRps(input, 'lmdb-put'))
  const engine = input.engine
  const results: TargetResult[] = [
    {
      target: 'GET one object with token check ≥ 60% of bare uWS GET',
      measured: `${fixed(getRatio === null ? null : getRatio * 100, 0, '%')} (${fixed(project?.requestsPerSecond, 0)} req/s)`,
      verdict: verdictOf(getRatio, (v) => v >= 0.6),
    },
    {
      target: 'durable POST of a time record ≥ 1.5× one-put-per-request baseline',
      measured: `${fixed(postRatio, 2, '×')} (${fixed(post?.requestsPerSecond, 0)} req/s)`,
      verdict: verdictOf(postRatio, (v) => v >= 1.5),
    },
    { target: 'durable POST p99 < 20 ms', measured: fixed(post?.p99Ms, 2, ' ms'), verdict: verdictOf(post?.p99Ms, (v) => v < 20) },
    { target: 'list of 100 with index-backed filter ≥ 15,000 req/s', measured: `${fixed(list?.requestsPerSecond, 0)} req/s`, verdict: verdictOf(list?.requestsPerSecond, (v) => v >= 15_000) },
    { target: 'memory ≤ 400 bytes per time record resident', measured: fixed(input.bytesPerRecordResident, 0, ' B (RSS)'), verdict: verdictOf(input.bytesPerRecordResident, (v) => v <= 400) },
    { target: 'recovery of the tenant from its snapshot < 3 s', measured: fixed(engine === null ? null : engine.recoveryMs / 1000, 2, ' s'), verdict: verdictOf(engine?.recoveryMs, (v) => v < 3000) },
    { target: 'log replay ≥ 200,000 commands/s', measured: `${fixed(engine?.replayPerSecond, 0)} /s`, verdict: verdictOf(engine?.replayPerSecond, (v) => v >= 200_000) },
    { target: 'batch of 100 creations ≥ 10× faster than 100 single POSTs', measured: fixed(input.batchVsSingle?.speedup, 1, '×'), verdict: verdictOf(input.batchVsSingle?.speedup, (v) => v >= 10) },
  ]
  for (const time of input.serverTimes) {
    if (time.targetMs === undefined) continue
    results.push({
      target: `${time.description} < ${time.targetMs} ms (server time, median, 1 connection)`,
      measured: `${fixed(time.medianMs, 2, ' ms')} (min ${fixed(time.minMs, 2)}; wall ${fixed(time.wallMedianMs, 2, ' ms')})`,
      verdict: verdictOf(time.medianMs, (v) => v < (time.targetMs as number)),
    })
  }
  return results
}
