/*
 * "Server time" of single queries on the big tenant (issue 3/6 targets):
 * each query is sent REPEAT times, one after another over one keep-alive
 * connection with nothing else running, after one unmeasured warm-up
 * request. Two times are kept per query: the server's own (its
 * Server-Timing header: from the request's arrival to the answer being
 * ready), which the targets are judged by, and the wall time at the
 * client, which adds sending the answer. For a small answer the two differ
 * by about 0.1 ms; a 276 KB page of expanded time records took 0.9 ms at
 * best and 3.3 ms in the median to arrive from a bare uWS server that had
 * it ready in memory, with this client.
 *
 * Also batch vs single: 100 time record creations as one POST /v1/batch,
 * against the same 100 POSTs sent one by one over one connection (each
 * waits for its own log flush), ROUNDS times each, medians compared.
 */
import { BenchClient, withQuery } from './httpClient.js'
import { timeRecordBody, type ScenarioContext } from './scenarios.js'

const REPEAT = 20
const ROUNDS = 5

export interface QueryTime {
  name: string
  description: string
  path: string
  /** The server's time (Server-Timing), in ms. */
  minMs: number
  medianMs: number
  maxMs: number
  /** Wall time at the client, in ms: the server's time plus sending the answer. */
  wallMinMs: number
  wallMedianMs: number
  /** Rows in the answer (array length), or the text of a $count. */
  answer: string
  targetMs?: number
}

export interface BatchVsSingle {
  batchMedianMs: number
  singleMedianMs: number
  /** How many times faster the batch is. */
  speedup: number
  rounds: number
}

export interface QuerySpec {
  name: string
  description: string
  path: string
  targetMs?: number
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

export function serverTimeSpecs(context: ScenarioContext): QuerySpec[] {
  const token = context.token
  const project = context.project.id
  const month = context.reportMonth
  const year = `${month.slice(0, 4)}-01-01`
  const records = (query: Record<string, string | number>) => withQuery('/v1/time/timerecords', { ...query, token })
  const report = (name: string, query: Record<string, string | number>) => withQuery(`/v1/time/reports/${name}`, { ...query, token })
  return [
    { name: 'get-project', description: 'GET one project', path: withQuery(`/v1/time/projects/${project}`, { token }) },
    { name: 'pinned-top100', description: `$filter=project/id eq (${context.project.records} records) &$top=100`, path: records({ $filter: `project/id eq '${project}'`, $top: 100 }), targetMs: 2 },
    { name: 'pinned-top100-noexpand', description: 'the same with no_expand=true', path: records({ $filter: `project/id eq '${project}'`, $top: 100, no_expand: 'true' }), targetMs: 2 },
    {
      name: 'fullscan-substringof',
      description: "$filter=substringof('xyz', description) eq true &$top=100 (matches none: visits every record)",
      path: records({ $filter: "substringof('xyz', description) eq true", $top: 100 }),
      targetMs: 100,
    },
    { name: 'sorted-start-desc', description: '$orderby=start desc &$top=100 (range-index walk)', path: records({ $orderby: 'start desc', $top: 100 }), targetMs: 150 },
    { name: 'sorted-duration-desc', description: '$orderby=duration desc &$top=100 (no index: full scan + top-100 buffer)', path: records({ $orderby: 'duration desc', $top: 100 }), targetMs: 150 },
    {
      name: 'list-scenario',
      description: `the list scenario: project/id eq (${context.project.records} records), $orderby=start desc, $top=100`,
      path: records({ $filter: `project/id eq '${project}'`, $orderby: 'start desc', $top: 100 }),
    },
    {
      name: 'count-pinned',
      description: "$count, project/id eq '…' and billable eq true",
      path: withQuery('/v1/time/timerecords/$count', { $filter: `project/id eq '${project}' and billable eq true`, token }),
    },
    { name: 'readtotals-month', description: 'readtotals, one month, ungrouped', path: report('readtotals', { range: 31, range_from: month }), targetMs: 5 },
    { name: 'readtotals-month-project', description: 'readtotals, one month, summary=project/id', path: report('readtotals', { range: 31, range_from: month, summary: 'project/id' }), targetMs: 5 },
    { name: 'singleslices-year-week', description: 'singleslices, one year, slice_by=7', path: report('singleslices', { range: 365, range_from: year, slice_by: 7 }), targetMs: 5 },
    { name: 'trendedtotals-12', description: 'trendedtotals, range=31, depth=12', path: report('trendedtotals', { range: 31, range_from: month, depth: 12 }), targetMs: 5 },
    {
      name: 'readtotals-filtered',
      description: 'readtotals, one month, $filter=billable eq true (query path: every record)',
      path: report('readtotals', { range: 31, range_from: month, $filter: 'billable eq true' }),
      targetMs: 150,
    },
  ]
}

function answerOf(json: unknown, text: string): string {
  if (Array.isArray(json)) return `${json.length} rows`
  if (typeof json === 'object' && json !== null) return `${Object.keys(json).length} keys`
  return text.slice(0, 20)
}

async function timeQuery(client: BenchClient, tenant: string, spec: QuerySpec): Promise<QueryTime> {
  const first = await client.expect(200, 'GET', spec.path, { tenant })
  const serverTimes: number[] = []
  const wallTimes: number[] = []
  for (let round = 0; round < REPEAT; round += 1) {
    const response = await client.expect(200, 'GET', spec.path, { tenant })
    if (response.serverMs === null) throw new Error(`no Server-Timing header on the answer to ${spec.name}`)
    serverTimes.push(response.serverMs)
    wallTimes.push(response.ms)
  }
  return {
    name: spec.name,
    description: spec.description,
    path: spec.path,
    minMs: Math.min(...serverTimes),
    medianMs: median(serverTimes),
    maxMs: Math.max(...serverTimes),
    wallMinMs: Math.min(...wallTimes),
    wallMedianMs: median(wallTimes),
    answer: answerOf(first.json, first.text),
    ...(spec.targetMs === undefined ? {} : { targetMs: spec.targetMs }),
  }
}

export async function measureServerTimes(context: ScenarioContext): Promise<QueryTime[]> {
  const client = new BenchClient(context.port)
  try {
    const out: QueryTime[] = []
    for (const spec of serverTimeSpecs(context)) out.push(await timeQuery(client, context.fixture.tenant, spec))
    return out
  } finally {
    client.close()
  }
}

export async function measureBatchVsSingle(context: ScenarioContext): Promise<BatchVsSingle> {
  const client = new BenchClient(context.port)
  const tenant = context.fixture.tenant
  const path = withQuery('/v1/time/timerecords', { token: context.token })
  const bodies = Array.from({ length: 100 }, (_, index) => timeRecordBody(context.project.id, index))
  const batchBody = JSON.stringify(bodies.map((body, index) => ({ id: String(index), method: 'POST', path: '/v1/time/timerecords', body })))
  try {
    const batchTimes: number[] = []
    const singleTimes: number[] = []
    for (let round = 0; round < ROUNDS; round += 1) {
      const batch = await client.expect(200, 'POST', withQuery('/v1/batch', { token: context.token }), { tenant, body: batchBody })
      if ((batch.json as { code: number }[]).some((answer) => answer.code !== 201)) throw new Error('a batch item was not created')
      batchTimes.push(batch.ms)
      const started = performance.now()
      for (const body of bodies) await client.expect(201, 'POST', path, { tenant, body })
      singleTimes.push(performance.now() - started)
    }
    const batchMedianMs = median(batchTimes)
    const singleMedianMs = median(singleTimes)
    return { batchMedianMs, singleMedianMs, speedup: singleMedianMs / batchMedianMs, rounds: ROUNDS }
  } finally {
    client.close()
  }
}
