/*
 * Exports over HTTP (src/http/export/): time record lists, summaries and the
 * five reports as CSV (format=csv or Accept: text/csv) and XLSX
 * (format=xlsx or Accept: the XLSX type). CSV is read back with an RFC 4180
 * parser (helpers/exportFiles.ts: quoted fields with commas, quotes and line
 * breaks; CRLF rows), XLSX with exceljs. Checked: the columns come from the
 * declaration (write-only fields absent, references as id and name), dates
 * in the account's time zone (Europe/Berlin, summer and winter offsets),
 * the list's filter, order and paging, each report against its JSON answer,
 * 406 TL01-9007 where no export is offered (an object, $metadata, a write,
 * a batch item), a 20,000-record export arriving in many chunks and whole,
 * a client leaving midway, and the cluster forwarder handing a chunked
 * answer on as a stream.
 */
import http from 'node:http'
import zlib from 'node:zlib'
import type { AddressInfo } from 'node:net'
import type ExcelJS from 'exceljs'
import t from 'tap'
import { HttpForwarder } from '../../src/cluster/httpForwarder.js'
import { StreamedBody, wholeBody } from '../../src/http/streamedBody.js'
import { strictCalls } from '../helpers/api.js'
import { csvObjects, parseCsv, readXlsx } from '../helpers/exportFiles.js'
import { TestClient } from '../helpers/http.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
const HOUR = 3_600_000

// The 20,000-record set-up sends 200 batches of 100 writes: above the default request rate per caller.
const server = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '100000' })
t.teardown(() => server.stop())
const { client } = server
const tenant = 'exp'
const { token } = await client.createTenant(tenant)
const { post, get, put } = strictCalls(client, tenant, token)
const getRaw = (path: string, query: Record<string, string | number | boolean> = {}, headers: Record<string, string> = {}) =>
  client.request('GET', `/v1/${path}`, { tenant, query: { token, ...query }, headers })

/** A GET read raw, counting its chunks; with `pauseMs` the reading stops that long after the first chunk. */
function rawDownload(path: string, pauseMs = 0): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer; chunks: number }> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port: client.port, path, headers: { host: `${tenant}.localhost` }, agent: false }, (response) => {
      const parts: Buffer[] = []
      response.on('data', (chunk: Buffer) => {
        parts.push(chunk)
        if (parts.length === 1 && pauseMs > 0) {
          response.pause()
          setTimeout(() => response.resume(), pauseMs)
        }
      })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(parts), chunks: parts.length }))
      response.on('error', reject)
    })
    request.on('error', reject)
  })
}

/**
 * After this process was held by parsing: in the in-process cluster, HAProxy may have marked the nodes down
 * meanwhile (they run in this process); wait until it routes again (at once for a single server).
 */
async function reachable(): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    if ((await getRaw('time/timerecords/$count')).status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error('the service did not answer again')
}

// A Berlin account: summer time is UTC+2, winter time UTC+1.
const account = await get('accounts/@own')
await put(`accounts/${account.id}`, { timeZone: 'Europe/Berlin' })
const me = await get('users/@self')
const tricky = await post('time/projects', { name: 'Alpha, "the first"' })
const plain = await post('time/projects', { name: 'Beta' })
const tag1 = await post('time/tags', { name: 'red' })
const tag2 = await post('time/tags', { name: 'blue; dark' })
const awkward = 'commas, "quotes"\r\nand a second line\nthird — ünïcödé ✓'
const records = [
  await post('time/timerecords', {
    user: { id: me.id },
    start: '2024-07-01T06:30:00Z',
    duration: 2 * HOUR,
    description: awkward,
    project: { id: tricky.id },
    tags: [{ id: tag1.id }, { id: tag2.id }],
    billable: true,
  }),
  await post('time/timerecords', { user: { id: me.id }, start: '2024-01-15T23:30:00Z', duration: 1 * HOUR, description: '=1+1', project: { id: plain.id }, billable: false }),
  await post('time/timerecords', { user: { id: me.id }, start: '2024-07-02T08:00:00.250Z', duration: 3 * HOUR, description: 'plain', project: { id: plain.id } }),
]

t.test('time records as CSV: columns from the declaration, quoting, dates in the account zone', async (t) => {
  const answer = await getRaw('time/timerecords', { format: 'csv', $orderby: 'start' })
  t.equal(answer.status, 200, answer.text)
  t.match(answer.headers['content-type'], /^text\/csv; charset=utf-8/)
  t.equal(answer.headers['content-disposition'], 'attachment; filename="timerecords.csv"')
  t.ok(answer.text.endsWith('\r\n'), 'every row ends in CRLF')
  const { header, rows } = csvObjects(answer.text)
  for (const column of [
    'id',
    'version',
    'createdAt',
    'displayName',
    'user/id',
    'user/displayName',
    'start',
    'duration',
    'description',
    'project/id',
    'project/displayName',
    'tags/id',
    'tags/displayName',
  ]) {
    t.ok(header.includes(column), `column ${column}`)
  }
  t.notOk(header.includes('externalSynced'), 'a write-only field is no column')
  t.notOk(header.includes('project'), 'a reference is its id and name, not an object')
  t.equal(rows.length, 3)
  const [winter, summer, withMs] = rows as [Record<string, string>, Record<string, string>, Record<string, string>]
  t.equal(summer.description, awkward, 'commas, quotes, CRLF, LF and non-ASCII text come back as stored')
  t.equal(summer['project/id'], tricky.id)
  t.equal(summer['project/displayName'], 'Alpha, "the first"')
  t.equal(summer['tags/id'], `${tag1.id}; ${tag2.id}`)
  t.equal(summer['tags/displayName'], 'red; blue; dark')
  t.equal(summer.start, '2024-07-01T08:30:00+02:00', 'summer time in Berlin')
  t.equal(Date.parse(summer.start as string), Date.parse('2024-07-01T06:30:00Z'), 'the same instant')
  t.equal(summer.billable, 'true')
  t.equal(summer.duration, String(2 * HOUR))
  t.equal(winter.start, '2024-01-16T00:30:00+01:00', 'winter time: the next local day')
  t.equal(winter.description, "'=1+1", 'text that would start a formula has a quote in front')
  t.equal(winter.billable, 'false')
  t.equal(withMs.start, '2024-07-02T10:00:00.250+02:00', 'milliseconds when there are any')
  t.equal(summer['user/displayName'], me.displayName)

  const byAccept = await getRaw('time/timerecords', { $orderby: 'start' }, { accept: 'text/csv' })
  t.equal(byAccept.status, 200)
  t.equal(byAccept.text, answer.text, 'Accept: text/csv gives the same file')
  const preferJson = await getRaw('time/timerecords', {}, { accept: 'text/csv;q=0.5, application/json' })
  t.match(preferJson.headers['content-type'], /^application\/json/, 'a preferred JSON wins over CSV')
  t.equal(preferJson.json.length, 3)
})

t.test('CSV cells that a spreadsheet would run as a formula are written as text; numbers stay numbers', async (t) => {
  // A tenant of its own: the other tests count this one's records.
  const own = await client.createTenant('expinj')
  const calls = strictCalls(client, 'expinj', own.token)
  const getRaw = (path: string, query: Record<string, string | number | boolean> = {}) => client.request('GET', `/v1/${path}`, { tenant: 'expinj', query: { token: own.token, ...query } })
  const me = await calls.get('users/@self')
  const post = calls.post
  const hostile = await post('time/projects', { name: '@cmd|calc' })
  const texts = ['=HYPERLINK("http://evil.test","x")', '+1+1', '-2+3', '@SUM(A1:A9)', '\tTAB first', '\rCR first', 'safe = text', "'already quoted"]
  for (const [index, description] of texts.entries()) {
    await post('time/timerecords', { user: { id: me.id }, start: `2024-03-0${index + 1}T10:00:00Z`, duration: HOUR, description, project: { id: hostile.id }, price: -12.5 })
  }
  const query = { $filter: `project/id eq '${hostile.id}'`, $orderby: 'start' }
  const answer = await getRaw('time/timerecords', { ...query, format: 'csv' })
  t.equal(answer.status, 200, answer.text)
  const { rows } = csvObjects(answer.text)
  t.same(
    rows.map((row) => row.description),
    ['\'=HYPERLINK("http://evil.test","x")', "'+1+1", "'-2+3", "'@SUM(A1:A9)", "'\tTAB first", "'\rCR first", 'safe = text', "'already quoted"],
    'a quote before =, +, -, @, TAB and CR; other text as stored',
  )
  t.ok(
    rows.every((row) => row['project/displayName'] === "'@cmd|calc"),
    "a reference's name too",
  )
  t.ok(
    rows.every((row) => row.price === '-12.5'),
    'a negative number is written as the number',
  )
  const summary = await getRaw('time/timerecords/summary', { $filter: query.$filter, summary: 'description;sum(price)', format: 'csv' })
  t.equal(summary.status, 200, summary.text)
  const summed = csvObjects(summary.text).rows
  t.ok(
    summed.some((row) => Object.values(row).includes("'-2+3")),
    "a summary's group text too",
  )
  t.ok(
    summed.some((row) => Object.values(row).includes('-12.5')),
    'and its sums stay numbers',
  )
  const xlsx = await readXlsx((await getRaw('time/timerecords', { ...query, format: 'xlsx' })).body)
  t.same(
    xlsx.rows.map((row) => row.description),
    texts.map((text) => text.replace(/\r\n?/g, '\n')),
    'XLSX keeps the text as it is (a typed text cell is never a formula)',
  )
})

t.test('the list query decides the rows: filter, order, paging, views, inner collections', async (t) => {
  const query = { $filter: `project/id eq '${plain.id}'`, $orderby: 'start desc' }
  const json = await get('time/timerecords', query)
  const csv = csvObjects((await getRaw('time/timerecords', { ...query, format: 'csv' })).text)
  t.same(
    csv.rows.map((row) => row.id),
    json.map((record: { id: string }) => record.id),
  )
  t.same(
    csv.rows.map((row) => row.id),
    [records[2].id, records[1].id],
  )
  const paged = csvObjects((await getRaw('time/timerecords', { $orderby: 'start', $skip: 1, $top: 1, format: 'csv' })).text)
  t.same(
    paged.rows.map((row) => row.id),
    [records[0].id],
    '$skip and $top',
  )
  const inner = csvObjects((await getRaw(`time/projects/${tricky.id}/timerecords`, { format: 'csv' })).text)
  t.same(
    inner.rows.map((row) => row.id),
    [records[0].id],
    'an inner collection',
  )
  const empty = await getRaw('time/timerecords', { $filter: "description eq 'nothing'", format: 'csv' })
  t.equal(empty.status, 200)
  t.equal(parseCsv(empty.text).length, 1, 'no match: the header row alone')
  const projects = csvObjects((await getRaw('time/projects', { format: 'csv', $orderby: 'name', append: 'timerecords-count' })).text)
  t.same(
    projects.rows.map((row) => row.name),
    ['Alpha, "the first"', 'Beta'],
    'another resource, same mechanism',
  )
  t.ok(projects.header.includes('timeRecordsCount'), 'an appended counter is a column')
  t.same(
    projects.rows.map((row) => row.timeRecordsCount),
    ['1', '2'],
  )
  const noCounter = csvObjects((await getRaw('time/projects', { format: 'csv' })).text)
  t.notOk(noCounter.header.includes('timeRecordsCount'), 'a counter not appended is no column')
  const badFilter = await getRaw('time/timerecords', { $filter: 'start eq', format: 'csv' })
  t.equal(badFilter.status, 400)
  t.equal(badFilter.json.code, 'TL01-1105', 'a bad filter is a JSON error, as without the export')
})

t.test('a CSV export is compressed as it streams when the client takes it; XLSX (a zip) is not', async (t) => {
  const plain = await getRaw('time/timerecords', { format: 'csv', $orderby: 'start' })
  const gzipped = await getRaw('time/timerecords', { format: 'csv', $orderby: 'start' }, { 'accept-encoding': 'gzip' })
  t.equal(gzipped.headers['content-encoding'], 'gzip', 'gzip')
  t.same(zlib.gunzipSync(gzipped.body).toString('utf8'), plain.text, 'the same file once decompressed')
  const brotli = await getRaw('time/timerecords', { format: 'csv', $orderby: 'start' }, { 'accept-encoding': 'br' })
  t.same(zlib.brotliDecompressSync(brotli.body).toString('utf8'), plain.text, 'brotli too')
  const xlsx = await getRaw('time/timerecords', { format: 'xlsx' }, { 'accept-encoding': 'gzip, br' })
  t.equal(xlsx.headers['content-encoding'], undefined, 'a spreadsheet goes as it is')
})

t.test('time records as XLSX', async (t) => {
  const answer = await getRaw('time/timerecords', { format: 'xlsx', $orderby: 'start' })
  t.equal(answer.status, 200, answer.text)
  t.equal(answer.headers['content-type'], XLSX_TYPE)
  t.equal(answer.headers['content-disposition'], 'attachment; filename="timerecords.xlsx"')
  const { header, rows } = await readXlsx(answer.body)
  const csvHeader = parseCsv((await getRaw('time/timerecords', { format: 'csv' })).text)[0]
  t.same(header, csvHeader, 'the same columns as the CSV')
  t.equal(rows.length, 3)
  const summer = rows[1] as Record<string, ExcelJS.CellValue>
  t.equal(summer.description, awkward.replaceAll('\r\n', '\n'), 'line breaks are LF in a cell')
  t.same(summer.start, new Date('2024-07-01T08:30:00Z'), 'a date cell showing the Berlin wall-clock time')
  t.equal(summer.duration, 2 * HOUR, 'numbers are numbers')
  t.equal(summer.billable, true, 'booleans are booleans')
  t.equal(summer['project/displayName'], 'Alpha, "the first"')
  t.equal((rows[0] as Record<string, ExcelJS.CellValue>).description, '=1+1', 'text stays text, never a formula')
  const byAccept = await getRaw('time/timerecords', { $orderby: 'start' }, { accept: XLSX_TYPE })
  t.equal(byAccept.headers['content-type'], XLSX_TYPE)
  t.equal((await readXlsx(byAccept.body)).rows.length, 3)
})

t.test('a summary in both formats', async (t) => {
  const query = { summary: 'project/id;count();sum(duration);max(start)' }
  const json = await get('time/timerecords/summary', query)
  const csv = await getRaw('time/timerecords/summary', { ...query, format: 'csv' })
  t.equal(csv.headers['content-disposition'], 'attachment; filename="timerecords-summary.csv"')
  const { header, rows } = csvObjects(csv.text)
  t.same(header, ['key', 'count()', 'sum(duration)', 'max(start)'])
  t.same(
    rows.map((row) => [row.key, row['count()'], row['sum(duration)']]),
    json.map((entry: { key: string; summaries: { value: string }[] }) => [entry.key, entry.summaries[0]?.value, entry.summaries[1]?.value]),
  )
  const plainRow = rows.find((row) => row.key === plain.id)
  t.equal(plainRow?.['max(start)'], '2024-07-02T10:00:00.250+02:00', 'the max of a date is a date')
  const xlsx = await readXlsx((await getRaw('time/timerecords/summary', { ...query, format: 'xlsx' })).body)
  t.same(xlsx.header, header)
  t.equal(xlsx.rows.find((row) => row.key === plain.id)?.['count()'], 2, 'a count is a number')
})

t.test('the five reports in both formats, as their JSON answers', async (t) => {
  const base = { range: 365, range_from: '2024-03-01' }
  const totalsColumns = ['count', 'time', 'billableTime', 'effectiveTime', 'money', 'averagePricePerHour', 'averageTime']
  const numbers = (row: Record<string, unknown>) => totalsColumns.map((name) => Number(row[name]))
  const jsonNumbers = (totals: Record<string, number>) => totalsColumns.map((name) => totals[name])

  const readtotals = await get('time/reports/readtotals', { ...base, summary: 'project/id' })
  const readCsv = csvObjects((await getRaw('time/reports/readtotals', { ...base, summary: 'project/id', format: 'csv' })).text)
  t.same(readCsv.header, ['key', ...totalsColumns])
  t.same(
    Object.fromEntries(readCsv.rows.map((row) => [row.key, numbers(row)])),
    Object.fromEntries(Object.entries(readtotals).map(([key, totals]) => [key, jsonNumbers(totals as Record<string, number>)])),
  )

  const grouped = await get('time/reports/groupedtotals', { ...base, summary: 'project/id' })
  const groupedCsv = await getRaw('time/reports/groupedtotals', { ...base, summary: 'project/id', format: 'csv' })
  t.equal(groupedCsv.headers['content-disposition'], 'attachment; filename="groupedtotals.csv"')
  const groupedRows = csvObjects(groupedCsv.text).rows
  t.same(
    groupedRows.map((row) => [row.key, row.displayName, ...numbers(row)]),
    grouped.map((group: { key: string; displayName: string; totals: Record<string, number> }) => [group.key, group.displayName, ...jsonNumbers(group.totals)]),
  )
  t.ok(groupedRows.some((row) => row.displayName === 'Alpha, "the first"'))

  const single = await get('time/reports/singletotals', base)
  const singleCsv = csvObjects((await getRaw('time/reports/singletotals', { ...base, format: 'csv' })).text)
  t.same(singleCsv.header, ['from', 'to', ...totalsColumns])
  t.same(singleCsv.rows.map(numbers), [jsonNumbers(single)])
  t.same([singleCsv.rows[0]?.from, singleCsv.rows[0]?.to], ['2024-01-01', '2024-12-31'], 'the period, as local days')

  const trend = await get('time/reports/trendedtotals', { ...base, depth: 2 })
  const trendCsv = csvObjects((await getRaw('time/reports/trendedtotals', { ...base, depth: 2, format: 'csv' })).text)
  t.same(
    trendCsv.rows.map((row) => [Number(row.offset), ...numbers(row)]),
    trend.map((totals: Record<string, number>, index: number) => [-index, ...jsonNumbers(totals)]),
  )
  t.same(
    trendCsv.rows.map((row) => row.from),
    ['2024-01-01', '2023-01-01', '2022-01-01'],
  )

  const slices = await get('time/reports/singleslices', { ...base, slice_by: 31 })
  const slicesCsv = csvObjects((await getRaw('time/reports/singleslices', { ...base, slice_by: 31, format: 'csv' })).text)
  t.same(slicesCsv.header, ['offset', 'from', 'to', 'time'])
  t.same(
    slicesCsv.rows.map((row) => [Number(row.offset), Number(row.time)]),
    slices.map((slice: { offset: number; time: number }) => [slice.offset, slice.time]),
  )
  t.same([slicesCsv.rows[6]?.from, slicesCsv.rows[6]?.to], ['2024-07-01', '2024-07-31'])

  for (const [name, query] of [
    ['readtotals', { summary: 'project/id' }],
    ['groupedtotals', { summary: 'project/id' }],
    ['singletotals', {}],
    ['trendedtotals', { depth: 2 }],
    ['singleslices', { slice_by: 31 }],
  ] as const) {
    const csv = csvObjects((await getRaw(`time/reports/${name}`, { ...base, ...query, format: 'csv' })).text)
    const xlsxAnswer = await getRaw(`time/reports/${name}`, { ...base, ...query, format: 'xlsx' })
    t.equal(xlsxAnswer.headers['content-type'], XLSX_TYPE, name)
    const xlsx = await readXlsx(xlsxAnswer.body)
    t.same(xlsx.header, csv.header, `${name}: the same columns`)
    t.same(
      xlsx.rows.map((row) => xlsx.header.map((column) => (row[column] === null ? '' : String(row[column])))),
      csv.rows.map((row) => csv.header.map((column) => row[column])),
      `${name}: the same cells`,
    )
  }
  const badReport = await getRaw('time/reports/trendedtotals', { range: 0, format: 'xlsx' })
  t.equal(badReport.status, 400, 'a report refused is a JSON error')
  t.match(badReport.headers['content-type'], /^application\/json/)
})

t.test('406 where no export is offered', async (t) => {
  const object = await getRaw(`time/timerecords/${records[0].id}`, { format: 'xlsx' })
  t.equal(object.status, 406)
  t.equal(object.json.code, 'TL01-9007')
  t.match(object.json.message, /xlsx is not offered here/)
  t.match(object.headers['content-type'], /^application\/json/, 'the error body is JSON')
  t.equal((await getRaw('time/timerecords/$metadata', { format: 'csv' })).status, 406)
  t.equal((await getRaw(`time/timerecords/${records[0].id}`, {}, { accept: 'text/csv' })).status, 406, 'an Accept that only an export meets')
  t.equal((await getRaw(`time/timerecords/${records[0].id}`, {}, { accept: 'text/csv, application/json;q=0.1' })).status, 200, 'an Accept that JSON meets too')
  t.equal((await getRaw(`time/timerecords/${records[0].id}`, {}, { accept: 'text/csv, */*;q=0.1' })).status, 200)
  const before = (await get('time/projects')).length
  const write = await client.request('POST', '/v1/time/projects', { tenant, query: { token, format: 'csv' }, body: { name: 'never' } })
  t.equal(write.status, 406, 'a write asking for an export is refused')
  t.equal((await get('time/projects')).length, before, '… before it is made')
  const batch = await client.request('POST', '/v1/batch', {
    tenant,
    query: { token },
    body: [
      { id: 'csv', method: 'GET', path: '/v1/time/timerecords?format=csv' },
      { id: 'json', method: 'GET', path: '/v1/time/timerecords' },
    ],
  })
  t.equal(batch.status, 200, batch.text)
  const [csvItem, jsonItem] = batch.json as { code: number; body: string }[]
  t.equal(csvItem?.code, 406, 'an export inside a batch is refused')
  t.match(JSON.parse(csvItem?.body ?? '{}'), { code: 'TL01-9007' })
  t.equal(jsonItem?.code, 200)
  const other = await getRaw('time/timerecords', { format: 'pdf' })
  t.equal(other.status, 200, 'an unknown format is the usual answer, as before')
})

t.test('a 20,000-record export streams in many chunks and arrives whole', async (t) => {
  const total = 20_000
  const perBatch = 100
  const rounds = Array.from({ length: total / perBatch }, (_, round) => round)
  const writers = 4
  for (let next = 0; next < rounds.length; next += writers) {
    await Promise.all(
      rounds.slice(next, next + writers).map(async (round) => {
        const items = Array.from({ length: perBatch }, (_, index) => ({
          id: String(index),
          method: 'POST',
          path: '/v1/time/timerecords',
          body: JSON.stringify({
            user: { id: me.id },
            start: new Date(Date.UTC(2025, 0, 1) + (round * perBatch + index) * 60_000).toISOString(),
            duration: 60_000,
            description: `bulk ${round * perBatch + index}, "n"`,
            project: { id: plain.id },
          }),
        }))
        const answer = await client.request('POST', '/v1/batch', { tenant, query: { token }, body: items, timeoutMs: 60_000 })
        if (answer.status !== 200) throw new Error(`batch ${round}: ${answer.status} ${answer.text}`)
      }),
    )
  }
  const filter = "startswith(description, 'bulk ')"
  const query = `token=${token}&$orderby=start&$filter=${encodeURIComponent(filter)}`
  // Everything is downloaded first and parsed after: parsing megabytes holds this process, and in the in-process
  // cluster (TIMELEDGER_TEST_CLUSTER=1) the nodes live in it too and would miss HAProxy's health checks meanwhile.
  const csv = await rawDownload(`/v1/time/timerecords?${query}&format=csv`)
  const xlsx = await rawDownload(`/v1/time/timerecords?${query}&format=xlsx`)
  // A client that stops reading: the socket's buffers fill, the server waits for them (onWritable) and goes on.
  const slow = await rawDownload(`/v1/time/timerecords?${query}&format=csv`, 500)
  const paged = await get('time/timerecords', { $filter: filter })
  t.equal(paged.length, 1000, 'the JSON list keeps its page of 1000')

  for (const answer of [csv, xlsx, slow]) t.equal(answer.status, 200)
  t.equal(csv.headers['transfer-encoding'], 'chunked', 'sent without a length, as it is made')
  t.ok(csv.chunks >= 20, `arrived in ${csv.chunks} chunks`)
  const { rows } = csvObjects(csv.body.toString('utf8'))
  t.equal(rows.length, total, 'every record')
  t.equal(new Set(rows.map((row) => row.id)).size, total, 'each once')
  t.same(
    rows.slice(0, 3).map((row) => row.description),
    ['bulk 0, "n"', 'bulk 1, "n"', 'bulk 2, "n"'],
  )
  t.equal(rows[total - 1]?.description, `bulk ${total - 1}, "n"`, 'in order to the last')
  t.equal(rows[0]?.start, '2025-01-01T01:00:00+01:00')
  const sheet = await readXlsx(xlsx.body)
  t.equal(sheet.rows.length, total, 'the XLSX holds every record')
  t.equal(sheet.rows[total - 1]?.description, `bulk ${total - 1}, "n"`)
  t.ok(slow.body.byteLength > 5_000_000, 'more than loopback socket buffers hold')
  t.equal(csvObjects(slow.body.toString('utf8')).rows.length, total, 'a client that paused gets the whole file')
  await reachable()
})

t.test('a client leaving midway does not disturb the server', async (t) => {
  await new Promise<void>((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port: client.port, path: `/v1/time/timerecords?token=${token}&format=csv`, headers: { host: `${tenant}.localhost` }, agent: false }, (response) => {
      response.once('data', () => {
        request.destroy()
        resolve()
      })
    })
    request.on('error', (error) => {
      if (!request.destroyed) reject(error)
    })
  })
  const after = await getRaw('time/timerecords/$count')
  t.equal(after.status, 200)
  t.ok(Number(after.text) > 20_000, 'the tenant answers on')
  const again = await getRaw('time/timerecords', { format: 'csv', $top: 5 })
  t.equal(parseCsv(again.text).length, 6, 'and exports again')
})

t.test('the cluster forwarder hands a chunked answer on as a stream, a whole one whole', async (t) => {
  const node = http.createServer((request, response) => {
    if (request.url?.startsWith('/v1/chunked') === true) {
      response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' })
      let sent = 0
      const sendMore = () => {
        if (sent === 50) {
          response.end()
          return
        }
        sent += 1
        response.write(`row ${sent}\r\n`)
        setImmediate(sendMore)
      }
      sendMore()
      return
    }
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' })
    response.end('{}')
  })
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve))
  t.teardown(() => node.close())
  const forwarder = new HttpForwarder('secret', 1024 * 1024)
  t.teardown(() => forwarder.close())
  const nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`
  const request = {
    method: 'GET',
    addressPrefix: '',
    jsonpSuffix: false,
    query: new Map<string, string>(),
    rawQuery: '',
    headers: new Map<string, string>(),
    body: Buffer.alloc(0),
    tenant,
    remoteAddress: () => '127.0.0.1',
  }
  const streamed = await forwarder.forward({ ...request, segments: ['chunked'] }, nodeUrl)
  t.ok(streamed.body instanceof StreamedBody, 'a chunked answer is a streamed body')
  t.equal(streamed.headers['content-type'], 'text/csv; charset=utf-8')
  const text = (await wholeBody(streamed.body)).toString()
  t.equal(text.split('\r\n').length - 1, 50)
  t.ok(text.startsWith('row 1\r\n') && text.endsWith('row 50\r\n'))
  const whole = await forwarder.forward({ ...request, segments: ['whole'] }, nodeUrl)
  t.ok(Buffer.isBuffer(whole.body), 'an answer with a length is read whole, as before')
})

t.test(
  'through a cluster: the node that does not hold the tenant forwards the export, streamed',
  { skip: process.env.TIMELEDGER_TEST_CLUSTER === '1' ? false : 'needs PostgreSQL and HAProxy: run with TIMELEDGER_TEST_CLUSTER=1' },
  async (t) => {
    const { startInProcessCluster } = await import('../helpers/cluster.js')
    const cluster = await startInProcessCluster(tempDataDir('exports-cluster'))
    t.teardown(() => cluster.stop())
    const owner = await cluster.client.createTenant('fwd')
    const calls = strictCalls(cluster.client, 'fwd', owner.token)
    const user = await calls.get('users/@self')
    const items = Array.from({ length: 100 }, (_, index) => ({
      id: String(index),
      method: 'POST',
      path: '/v1/time/timerecords',
      body: JSON.stringify({ user: { id: user.id }, start: new Date(Date.UTC(2025, 5, 1) + index * 60_000).toISOString(), duration: 60_000, description: `fwd ${index}` }),
    }))
    for (let round = 0; round < 3; round += 1) {
      const answer = await cluster.client.request('POST', '/v1/batch', { tenant: 'fwd', query: { token: owner.token }, body: items })
      t.equal(answer.status, 200, answer.text)
    }
    const forwardsOf = (service: (typeof cluster.services)[number]) => (service.services.forwarder as HttpForwarder).forwards
    const before = cluster.services.map(forwardsOf)
    const answers = []
    for (const service of cluster.services) {
      const direct = new TestClient(service.port)
      answers.push(await direct.request('GET', '/v1/time/timerecords', { tenant: 'fwd', query: { token: owner.token, format: 'csv', $orderby: 'start' } }))
    }
    const forwarded = cluster.services.map((service, index) => forwardsOf(service) - (before[index] ?? 0))
    t.same([...forwarded].sort(), [0, 1], 'one node answered, the other forwarded')
    const [first, second] = answers
    t.equal(first?.status, 200)
    t.equal(second?.status, 200)
    t.equal(first?.text, second?.text, 'the same file from both nodes')
    t.equal(csvObjects(first?.text ?? '').rows.length, 300)
    const viaForward = answers[forwarded.indexOf(1)]
    t.equal(viaForward?.headers['transfer-encoding'], 'chunked', 'the forwarding node streams it on')
    t.match(viaForward?.headers['content-disposition'], /filename="timerecords.csv"/)
  },
)
