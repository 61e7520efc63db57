/*
 * Summaries and reports on a small fixed data set with hand-computed
 * answers: period boundaries in a UTC+2 account (a record at 23:30 local),
 * week and month edges, a leap year, offsets both ways (also for range
 * 999), range_to moving to the end of a week, month or year, 53 weekly
 * slices, weeks starting on Sunday, an empty summary, a summary over time
 * records; and the account's and users' weekStart and timeZone refused when
 * invalid. Pricing is in pricing.test.ts, the differential test of the
 * aggregates in reportsDifferential.test.ts.
 */
import t from 'tap'
import { strictCalls } from '../helpers/api.js'
import type { AnswerJson } from '../helpers/http.js'
import { startInProcess } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = await client.createTenant('rep')
const token = owner.token
const q = (query: Record<string, string | number | boolean> = {}) => ({ tenant: 'rep', query: { token, ...query } })
const HOUR = 3_600_000

const { post, get } = strictCalls(client, 'rep', token)

const me = await get('users/@self')
const account = await get('accounts/@own')
const relevant = (totals: AnswerJson) => ({ count: totals.count, time: totals.time })

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
  t.same(month['*'], { count: 3, time: 8 * HOUR, billableTime: 8 * HOUR, effectiveTime: 8 * HOUR, money: 80.5, averagePricePerHour: 10.0625, averageTime: ((8 * HOUR) / 3) | 0 })
  const monthAggregated = await get('time/reports/readtotals', { range: 31, range_from: '2024-06-15' })
  t.same(monthAggregated, month, 'the aggregate path answers the same')
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
  t.same(
    trend.map(relevant),
    [
      { count: 3, time: 8 * HOUR },
      { count: 1, time: 6 * HOUR },
    ],
    'the defined year first, then the one before',
  )
  const slices = await get('time/reports/singleslices', { range: 365, range_from: '2024-01-01', slice_by: 7, $filter: `project/id eq '${projectA}'` })
  t.equal(slices.length, 53, 'a year sliced by weeks has 53 slices')
  t.same(slices[8], { offset: 8, time: 5 * HOUR }, 'Feb 29 is day 59, in slice 8')
  const monthly = await get('time/reports/singleslices', { range: 365, range_from: '2024-01-01', slice_by: 31, $filter: `project/id eq '${projectA}'` })
  t.equal(monthly.length, 12)
  t.same(
    monthly.map((slice: { time: number }) => slice.time / HOUR),
    [0, 5, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0],
  )
  const grouped = await get('time/reports/groupedtotals', { range: 31, range_from: '2024-06-01', summary: 'project/id' })
  t.match(
    grouped.find((entry: { key: string }) => entry.key === projectB),
    { displayName: 'Report B', totals: { count: 2 } },
  )
})

// The tenant holds exactly the seven records above from here on.

t.test('range_to moves to the end of the week, month or year; offset with range 999', async (t) => {
  const cases: [Record<string, string | number>, { count: number; time: number }, string][] = [
    [{ range: 7, range_from: '2024-05-29' }, { count: 2, time: 11 * HOUR }, 'the week of Wed May 29: Mon May 27 to Sun June 2'],
    [{ range: 7, range_from: '2024-05-29', range_to: '2024-06-04' }, { count: 3, time: 14 * HOUR }, 'range_to Tue June 4 extends to Sun June 9'],
    [{ range: 31, range_from: '2024-05-20' }, { count: 1, time: 7 * HOUR }, 'May alone'],
    [{ range: 31, range_from: '2024-05-20', range_to: '2024-06-10' }, { count: 4, time: 15 * HOUR }, 'range_to June 10 extends to June 30 (23:30 local June 30 in, 00:30 July 1 out)'],
    [{ range: 365, range_from: '2023-03-01' }, { count: 1, time: 6 * HOUR }, '2023 alone'],
    [{ range: 365, range_from: '2023-03-01', range_to: '2024-01-05' }, { count: 7, time: 28 * HOUR }, 'range_to in 2024 extends to Dec 31, 2024'],
    [{ range: 999, range_from: '2024-06-01', range_to: '2024-06-30' }, { count: 3, time: 8 * HOUR }, 'June 1–30'],
    [{ range: 999, range_from: '2024-06-01', range_to: '2024-06-30', offset: -1 }, { count: 1, time: 7 * HOUR }, 'offset -1: the 30 days before, May 2–31'],
    [{ range: 999, range_from: '2024-06-01', range_to: '2024-06-30', offset: 1 }, { count: 1, time: 2 * HOUR }, 'offset +1: July 1–30'],
    [{ range: 999, range_from: '2024-06-01', range_to: '2024-06-30', offset: -4 }, { count: 1, time: 5 * HOUR }, 'offset -4: Feb 2 – Mar 2 holds the leap day'],
  ]
  for (const [query, expected, message] of cases) {
    t.same(relevant(await get('time/reports/singletotals', query)), expected, `${message} (aggregates)`)
    t.same(relevant(await get('time/reports/singletotals', { ...query, $filter: 'duration ge 0 or duration eq null' })), expected, `${message} (query engine)`)
  }
})

t.test('weeks start on Sunday with weekStart 7', async (t) => {
  const put = await client.request('PUT', `/v1/accounts/${account.id}`, { ...q({ version_ignore: true }), body: { weekStart: 7 } })
  t.equal(put.status, 200, put.text)
  for (const filter of [undefined, 'duration ge 0 or duration eq null']) {
    const path = filter === undefined ? 'aggregates' : 'query engine'
    const f: Record<string, string> = filter === undefined ? {} : { $filter: filter }
    // Wed June 5, 2024 is in the week Sun June 2 – Sat June 8: June 2 (10:00 local, 4 h) and Mon June 3 (3 h).
    t.same(relevant(await get('time/reports/singletotals', { range: 7, range_from: '2024-06-05', ...f })), { count: 2, time: 7 * HOUR }, `the week of June 5 starts Sunday June 2 (${path})`)
    t.same(relevant(await get('time/reports/singletotals', { range: 7, range_from: '2024-06-02', ...f })), { count: 2, time: 7 * HOUR }, `a Sunday starts its own week (${path})`)
    // Sun May 26 – Sat June 1: Fri May 31 23:59 local (7 h).
    t.same(relevant(await get('time/reports/singletotals', { range: 7, range_from: '2024-06-05', offset: -1, ...f })), { count: 1, time: 7 * HOUR }, `the week before is May 26 – June 1 (${path})`)
    // Sun June 30 – Sat July 6: 23:30 local June 30 (1 h) and 00:30 local July 1 (2 h).
    t.same(relevant(await get('time/reports/singletotals', { range: 7, range_from: '2024-07-06', ...f })), { count: 2, time: 3 * HOUR }, `Saturday July 6 is in the week of Sunday June 30 (${path})`)
    const days = await get('time/reports/singleslices', { range: 7, range_from: '2024-06-05', slice_by: 1, ...f })
    t.same(
      days.map((slice: { time: number }) => slice.time / HOUR),
      [4, 3, 0, 0, 0, 0, 0],
      `daily slices run Sunday to Saturday (${path})`,
    )
    const trend = await get('time/reports/trendedtotals', { range: 7, range_from: '2024-06-05', depth: 1, ...f })
    t.same(
      trend.map(relevant),
      [
        { count: 2, time: 7 * HOUR },
        { count: 1, time: 7 * HOUR },
      ],
      `trend by Sunday weeks (${path})`,
    )
  }
  const back = await client.request('PUT', `/v1/accounts/${account.id}`, { ...q({ version_ignore: true }), body: { weekStart: 1 } })
  t.equal(back.status, 200)
  t.same(relevant(await get('time/reports/singletotals', { range: 7, range_from: '2024-06-02' })), { count: 2, time: 11 * HOUR }, 'with Monday weeks, Sunday June 2 ends the week of May 27')
})

t.test('an empty summary is no grouping', async (t) => {
  const empty = await get('time/reports/readtotals', { summary: '' })
  t.same(Object.keys(empty), ['*'], 'readtotals?summary= answers {"*": totals}')
  t.same(relevant(empty['*']), { count: 7, time: 28 * HOUR })
  t.same(empty, await get('time/reports/readtotals'), 'the same as without summary')
  const grouped = await get('time/reports/groupedtotals', { summary: ' ' })
  t.same(
    grouped.map((entry: { key: string }) => entry.key),
    ['*'],
  )
  const none = await get('time/reports/readtotals', { summary: '', range: 1, range_from: '2000-01-01' })
  t.same(relevant(none['*']), { count: 0, time: 0 }, 'also when nothing is in the period')
})

t.test('a summary over time records', async (t) => {
  const byUser = await get('time/timerecords/summary', { summary: 'user/id;sum(duration);count()' })
  t.same(byUser, [
    {
      key: me.id,
      summaries: [
        { name: 'sum(duration)', value: String(28 * HOUR) },
        { name: 'count()', value: '7' },
      ],
    },
  ])
  const byProject = await get('time/timerecords/summary', { summary: 'project/displayName;count();sum(duration);max(duration)' })
  t.same(byProject, [
    {
      key: 'Report A',
      summaries: [
        { name: 'count()', value: '4' },
        { name: 'sum(duration)', value: String(14 * HOUR) },
        { name: 'max(duration)', value: String(6 * HOUR) },
      ],
    },
    {
      key: 'Report B',
      summaries: [
        { name: 'count()', value: '3' },
        { name: 'sum(duration)', value: String(14 * HOUR) },
        { name: 'max(duration)', value: String(7 * HOUR) },
      ],
    },
  ])
  const billable = await get('time/timerecords/summary', { summary: 'sum(duration);avg(price)', $filter: 'billable eq true' })
  t.same(
    billable,
    [
      {
        key: '*',
        summaries: [
          { name: 'sum(duration)', value: String(19 * HOUR) },
          { name: 'avg(price)', value: '38.1' },
        ],
      },
    ],
    '(10 + 30.5 + 40 + 50 + 60) / 5',
  )
})

t.test('weekStart and timeZone are checked on Account and User', async (t) => {
  const before = await get('accounts/@own')
  const refusals: [string, Record<string, unknown>, string][] = [
    [`accounts/${account.id}`, { weekStart: 9 }, 'Max'],
    [`accounts/${account.id}`, { weekStart: 0 }, 'Min'],
    [`accounts/${account.id}`, { timeZone: 'Mars/Olympus_Mons' }, 'TimeZone'],
    [`accounts/${account.id}`, { timeZone: '' }, 'TimeZone'],
    [`users/${me.id}`, { weekStart: 8 }, 'Max'],
    [`users/${me.id}`, { timeZone: 'Europe/Atlantis' }, 'TimeZone'],
  ]
  for (const [path, body, constraint] of refusals) {
    const refused = await client.request('PUT', `/v1/${path}`, { ...q({ version_ignore: true }), body })
    t.equal(refused.status, 412, `${path} ${JSON.stringify(body)} refused`)
    t.equal(refused.json?.code, 'TL01-1104')
    t.match(refused.json?.constraintViolation, { field: Object.keys(body)[0], constraint })
  }
  const created = await client.request('POST', '/v1/users', { ...q(), body: { firstName: 'Zone', lastName: 'Less', email: 'zone@rep.test', password: 'zone-password', timeZone: 'Nowhere/Special' } })
  t.equal(created.status, 412, 'a new user with an unknown time zone is refused')
  t.match(created.json?.constraintViolation, { entityType: 'User', field: 'timeZone', constraint: 'TimeZone' })
  const after = await get('accounts/@own')
  t.same([after.weekStart, after.timeZone, after.version], [before.weekStart, before.timeZone, before.version], 'nothing was stored')
  for (const zone of ['UTC', 'America/New_York', 'Asia/Kathmandu', 'Europe/Berlin']) {
    const accepted = await client.request('PUT', `/v1/accounts/${account.id}`, { ...q({ version_ignore: true }), body: { timeZone: zone, weekStart: 7 } })
    t.equal(accepted.status, 200, `${zone} accepted`)
  }
  await client.request('PUT', `/v1/accounts/${account.id}`, { ...q({ version_ignore: true }), body: { weekStart: 1 } })
  const metadata = await get('accounts/$metadata')
  const fieldOf = (name: string) => metadata.fields.find((field: { name: string }) => field.name === name)
  t.match(fieldOf('timeZone').constraints, [{ type: 'TimeZone' }], '$metadata shows the TimeZone constraint')
  t.match(fieldOf('weekStart').constraints, [
    { type: 'Min', details: 'value 1' },
    { type: 'Max', details: 'value 7' },
  ])
  const userMetadata = await get('users/$metadata')
  t.match(userMetadata.fields.find((field: { name: string }) => field.name === 'timeZone').constraints, [{ type: 'TimeZone' }])
})

t.test('the trend and the slices without a range: the current year (the original answers 12 slices by month)', async (t) => {
  const startMs = Date.now() - 2 * HOUR
  await post('time/timerecords', { user: { id: me.id }, start: `/Date(${startMs})/`, duration: HOUR })
  const slices = await get('time/reports/singleslices')
  t.equal(slices.length, 12, 'twelve slices: the months of the current year')
  t.same(
    slices.map((slice: { offset: number }) => slice.offset),
    [...Array(12).keys()],
  )
  t.equal(
    slices.reduce((sum: number, slice: { time: number }) => sum + slice.time, 0),
    HOUR,
    "this year's time, in its month",
  )
  const trend = await get('time/reports/trendedtotals')
  t.equal(trend.length, 2, 'depth 1 by default: this year and the one before')
  t.match(relevant(trend[0]), { count: 1, time: HOUR })
  t.match(relevant(trend[1]), { count: 0, time: 0 })
  const unbounded = await client.request('GET', '/v1/time/reports/trendedtotals', q({ range: 0 }))
  t.equal(unbounded.status, 400, 'range 0 named on purpose still has no earlier period to compare')
})
