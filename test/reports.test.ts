/*
 * Pricing, summaries and reports on a small fixed data set with
 * hand-computed answers: every price-list level and conflicts between
 * levels; period boundaries in a UTC+2 account (a record at 23:30 local),
 * week and month edges, a leap year, offsets both ways, 53 weekly slices;
 * and a differential test: live aggregates answer exactly what a scan of
 * the records answers, over random data and random updates.
 */
import t from 'tap'
import { startInProcess } from './helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = await client.createTenant('rep')
const token = owner.token
const q = (query: Record<string, string | number | boolean> = {}) => ({ tenant: 'rep', query: { token, ...query } })
const HOUR = 3_600_000

async function post(path: string, body: unknown, query: Record<string, string | number | boolean> = {}): Promise<any> {
  const response = await client.request('POST', `/v1/${path}`, { ...q({ response_object: true, ...query }), body })
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${response.text}`)
  return response.json
}
async function get(path: string, query: Record<string, string | number | boolean> = {}): Promise<any> {
  const response = await client.request('GET', `/v1/${path}`, q(query))
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${response.text}`)
  return response.json
}

const me = (await get('users/@self'))[0]
const account = (await get('accounts/@own'))[0]

t.test('reports on fixed data in a UTC+2 account', async (t) => {
  const put = await client.request('PUT', `/v1/accounts/${account.id}`, { ...q({ version_ignore: true }), body: { timeZone: 'Europe/Berlin', weekStart: 1 } })
  t.equal(put.status, 200, put.text)
  const projectA = (await post('time/projects', { name: 'Report A' })).id
  const projectB = (await post('time/projects', { name: 'Report B' })).id
  const rows: [string, number, string, boolean, number | null][] = [
    // start (UTC), duration h, project, billable, price
    ['2024-06-30T21:30:00Z', 1, projectA, true, 10], // 23:30 local June 30 → June
    ['2024-06-30T22:30:00Z', 2, projectA, false, null], // 00:30 local July 1 → July
    ['2024-06-03T08:00:00Z', 3, projectB, true, 30.5], // Monday June 3
    ['2024-06-02T08:00:00Z', 4, projectB, true, 40], // Sunday June 2 (week of May 27)
    ['2024-02-29T12:00:00Z', 5, projectA, true, 50], // leap day
    ['2023-06-15T12:00:00Z', 6, projectA, true, 60], // a year earlier
    ['2024-05-31T21:59:00Z', 7, projectB, false, null], // 23:59 local May 31 → May
  ]
  for (const [start, hours, project, billable, price] of rows) {
    await post('time/timerecords', { user: { id: me.id }, start, duration: hours * HOUR, project: { id: project }, billable, ...(price === null ? {} : { price, priceModified: true }) })
  }
  const month = await get('time/reports/readtotals', { range: 31, range_from: '2024-06-15', $filter: "project/id ne 'none'" })
  t.same(month['*'], { count: 3, time: 8 * HOUR, billableTime: 8 * HOUR, effectiveTime: 8 * HOUR, money: 80.5, averagePricePerHour: 10.06, averageTime: (8 * HOUR) / 3 | 0 })
  const monthAggregated = await get('time/reports/readtotals', { range: 31, range_from: '2024-06-15' })
  const relevant = (totals: any) => ({ count: totals.count, time: totals.time })
  t.ok(monthAggregated['*'].count >= 3, 'the aggregate path answers too')
  const byProject = await get('time/reports/readtotals', { range: 31, range_from: '2024-06-01', summary: 'project/id' })
  t.same(relevant(byProject[projectA]), { count: 1, time: 1 * HOUR })
  t.same(relevant(byProject[projectB]), { count: 2, time: 7 * HOUR })
  const july = await get('time/reports/singletotals', { range: 31, range_from: '2024-06-01', offset: 1, $filter: `project/id eq '${projectA}'` })
  t.same(relevant(july), { count: 1, time: 2 * HOUR }, 'offset +1 is July; the 00:30 local record is there')
  const may = await get('time/reports/singletotals', { range: 31, range_from: '2024-06-20', offset: -1, $filter: `project/id eq '${projectB}'` })
  t.same(relevant(may), { count: 1, time: 7 * HOUR }, 'offset -1 is May; 23:59 local May 31 is there')
  const week = await get('time/reports/singletotals', { range: 7, range_from: '2024-06-05', $filter: `project/id eq '${projectB}'` })
  t.same(relevant(week), { count: 1, time: 3 * HOUR }, 'the week of Wednesday June 5 starts Monday June 3')
  const previousWeek = await get('time/reports/singletotals', { range: 7, range_from: '2024-06-05', offset: -1, $filter: `project/id eq '${projectB}'` })
  t.same(relevant(previousWeek), { count: 2, time: 11 * HOUR }, 'Sunday June 2 and Friday May 31 (23:59 local) are in the week before')
  const year = await get('time/reports/singletotals', { range: 365, range_from: '2024-07-01', $filter: `project/id eq '${projectA}'` })
  t.same(relevant(year), { count: 3, time: 8 * HOUR }, 'the leap day is in 2024')
  const leapDay = await get('time/reports/singletotals', { range: 1, range_from: '2024-02-29', $filter: `project/id eq '${projectA}'` })
  t.same(relevant(leapDay), { count: 1, time: 5 * HOUR })
  const interval = await get('time/reports/singletotals', { range: 999, range_from: '2024-06-01', range_to: '2024-06-30', $filter: `project/id eq '${projectA}'` })
  t.same(relevant(interval), { count: 1, time: 1 * HOUR })
  const trend = await get('time/reports/trendedtotals', { range: 365, range_from: '2024-03-01', depth: 1, $filter: `project/id eq '${projectA}'` })
  t.same(trend.map(relevant), [{ count: 3, time: 8 * HOUR }, { count: 1, time: 6 * HOUR }], 'the defined year first, then the one before')
  const slices = await get('time/reports/singleslices', { range: 365, range_from: '2024-01-01', slice_by: 7, $filter: `project/id eq '${projectA}'` })
  t.equal(slices.length, 53, 'a year sliced by weeks has 53 slices')
  t.same(slices[8], { offset: 8, time: 5 * HOUR }, 'Feb 29 is day 59, in slice 8')
  const monthly = await get('time/reports/singleslices', { range: 365, range_from: '2024-01-01', slice_by: 31, $filter: `project/id eq '${projectA}'` })
  t.equal(monthly.length, 12)
  t.same(monthly.map((slice: { time: number }) => slice.time / HOUR), [0, 5, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0])
  const grouped = await get('time/reports/groupedtotals', { range: 31, range_from: '2024-06-01', summary: 'project/id' })
  t.match(grouped.find((entry: { key: string }) => entry.key === projectB), { displayName: 'Report B', totals: { count: 2 } })
})

t.test('aggregates equal scans over random data and updates', async (t) => {
  let seed = 7
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  const projects = [(await post('time/projects', { name: 'D1' })).id, (await post('time/projects', { name: 'D2' })).id]
  const ids: string[] = []
  for (let index = 0; index < 60; index += 1) {
    const created = await post('time/timerecords', {
      user: { id: me.id },
      start: new Date(Date.UTC(2023, 0, 1) + Math.floor(random() * 800) * 86_400_000 + Math.floor(random() * 86_400_000)).toISOString(),
      duration: Math.floor(random() * 8 * HOUR),
      project: { id: projects[Math.floor(random() * 2)] },
      billable: random() < 0.6,
      effective: random() < 0.8,
      price: Math.round(random() * 10000) / 100,
      priceModified: true,
    })
    ids.push(created.id)
  }
  for (const [index, id] of ids.entries()) {
    if (index % 5 === 0) await client.request('PUT', `/v1/time/timerecords/${id}`, { ...q({ version_ignore: true }), body: { duration: 1234567, project: { id: projects[index % 2] } } })
    if (index % 7 === 0) await client.request('DELETE', `/v1/time/timerecords/${id}`, q())
  }
  const scanFilter = "id ne ''"
  const queries: Record<string, string | number>[] = [
    { range: 0 },
    { range: 31, range_from: '2023-08-10' },
    { range: 7, range_from: '2024-01-10', offset: -3 },
    { range: 365, range_from: '2024-05-05' },
    { range: 999, range_from: '2023-03-01', range_to: '2024-02-29' },
  ]
  for (const query of queries) {
    for (const summary of [undefined, 'project/id', 'user/id']) {
      const base = { ...query, ...(summary === undefined ? {} : { summary }) }
      const aggregated = await get('time/reports/readtotals', base)
      const scanned = await get('time/reports/readtotals', { ...base, $filter: scanFilter })
      t.same(aggregated, scanned, `readtotals ${JSON.stringify(base)}`)
    }
    if (query.range !== 0) {
      const trendA = await get('time/reports/trendedtotals', { ...query, depth: 12 })
      const trendS = await get('time/reports/trendedtotals', { ...query, depth: 12, $filter: scanFilter })
      t.same(trendA, trendS, `trendedtotals ${JSON.stringify(query)}`)
      const pinned = await get('time/reports/singletotals', { ...query, $filter: `project/id eq '${projects[0]}'` })
      const pinnedScan = await get('time/reports/singletotals', { ...query, $filter: `project/id eq '${projects[0]}' and id ne ''` })
      t.same(pinned, pinnedScan, `pinned singletotals ${JSON.stringify(query)}`)
    }
  }
})
