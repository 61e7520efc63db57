/*
 * Every total of time agrees however a record was written (issue 38): a
 * time record given a start and a duration, a start and a stop, or all
 * three stores all three (domain/timeSpan.ts), so `summary=sum(duration)`,
 * the five reports (from the live aggregates, and from the query engine
 * when a $filter asks for it), the list's durations and the CSV and XLSX
 * files of the list, the summary and a report all say the same total.
 * Before, a record written with a start and a stop kept a null duration:
 * the reports counted stop − start, the summary and the files nothing.
 */
import t from 'tap'
import { strictCalls } from '../helpers/api.js'
import { csvObjects, readXlsx } from '../helpers/exportFiles.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const tenant = 'totals'
const { token } = await client.createTenant(tenant)
const { post, get } = strictCalls(client, tenant, token)
const getRaw = (path: string, query: Record<string, string | number | boolean>) => client.request('GET', `/v1/${path}`, { tenant, query: { token, ...query } })

const MINUTE_MS = 60_000
const me = (await get('users/@self')).id as string
const project = await post('time/projects', { name: 'Counted' })
const base = { user: { id: me }, project: { id: project.id } }
const written = [
  { way: 'a start and a duration', body: { ...base, description: 'duration', start: '2025-03-03T08:00:00Z', duration: 60 * MINUTE_MS }, duration: 60 * MINUTE_MS },
  { way: 'a start and a stop', body: { ...base, description: 'stop', start: '2025-03-04T08:00:00Z', stop: '2025-03-04T10:30:00Z' }, duration: 150 * MINUTE_MS },
  { way: 'all three', body: { ...base, description: 'both', start: '2025-03-05T08:00:00Z', stop: '2025-03-05T08:45:00Z', duration: 45 * MINUTE_MS }, duration: 45 * MINUTE_MS },
]
const ids = new Map<string, string>()
for (const { way, body } of written) ids.set(way, (await post('time/timerecords', body)).id as string)
const TOTAL_MS = written.reduce((sum, { duration }) => sum + duration, 0)

/** Through the live aggregates (no filter), and through the query engine (a filter that keeps every record). */
const ROUTES: { label: string; query: Record<string, string> }[] = [
  { label: 'live aggregates', query: {} },
  { label: 'query engine', query: { $filter: "description ne 'none'" } },
]

t.test('each record stores its duration and stop', async (t) => {
  for (const { way, duration } of written) {
    const rec = await get(`time/timerecords/${ids.get(way)}`)
    t.equal(rec.duration, duration, `${way}: the duration`)
    const ms = (date: string) => Number(/\d+/.exec(date)?.[0])
    t.equal(ms(rec.stop) - ms(rec.start), duration, `${way}: stop − start`)
  }
})

t.test('the summary, the reports and the list say the same total', async (t) => {
  for (const { label, query } of ROUTES) {
    const summary = await get('time/timerecords/summary', { ...query, summary: 'count();sum(duration)' })
    t.same(
      summary,
      [
        {
          key: '*',
          summaries: [
            { name: 'count()', value: '3' },
            { name: 'sum(duration)', value: String(TOTAL_MS) },
          ],
        },
      ],
      `${label}: summary`,
    )
    t.match(await get('time/reports/readtotals', query), { '*': { count: 3, time: TOTAL_MS } }, `${label}: readtotals`)
    t.match(await get('time/reports/singletotals', query), { count: 3, time: TOTAL_MS }, `${label}: singletotals`)
    t.match(await get('time/reports/groupedtotals', { ...query, summary: 'project/id' }), [{ key: project.id, totals: { time: TOTAL_MS } }], `${label}: groupedtotals`)
    const trend = await get('time/reports/trendedtotals', { ...query, range: 31, range_from: '2025-03-01', depth: 1 })
    t.equal(trend[0].time, TOTAL_MS, `${label}: trendedtotals`)
    const slices = (await get('time/reports/singleslices', { ...query, range: 31, range_from: '2025-03-01', slice_by: 1 })) as { time: number }[]
    t.equal(
      slices.reduce((sum, slice) => sum + slice.time, 0),
      TOTAL_MS,
      `${label}: singleslices`,
    )
    const list = (await get('time/timerecords', query)) as { duration: number }[]
    t.equal(
      list.reduce((sum, rec) => sum + rec.duration, 0),
      TOTAL_MS,
      `${label}: the list's durations`,
    )
  }
})

t.test('the CSV and XLSX files say it too', async (t) => {
  const csvList = csvObjects((await getRaw('time/timerecords', { format: 'csv' })).text)
  t.equal(
    csvList.rows.reduce((sum, row) => sum + Number(row.duration), 0),
    TOTAL_MS,
    'the list as CSV: every duration filled',
  )
  t.notOk(
    csvList.rows.some((row) => row.duration === ''),
    'no empty duration cell',
  )
  const xlsxList = await readXlsx((await getRaw('time/timerecords', { format: 'xlsx' })).body)
  t.equal(
    xlsxList.rows.reduce((sum, row) => sum + Number(row.duration), 0),
    TOTAL_MS,
    'the list as XLSX',
  )
  const csvSummary = csvObjects((await getRaw('time/timerecords/summary', { summary: 'sum(duration)', format: 'csv' })).text)
  t.equal(Number(csvSummary.rows[0]?.['sum(duration)']), TOTAL_MS, 'the summary as CSV')
  const csvReport = csvObjects((await getRaw('time/reports/singletotals', { format: 'csv' })).text)
  t.equal(Number(csvReport.rows[0]?.time), TOTAL_MS, 'a report as CSV')
  const xlsxReport = await readXlsx((await getRaw('time/reports/singletotals', { format: 'xlsx' })).body)
  t.equal(Number(xlsxReport.rows[0]?.time), TOTAL_MS, 'a report as XLSX')
})
