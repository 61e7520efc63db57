/*
 * The query engine over HTTP on real data: $filter operators, functions,
 * nulls and paths through references; $orderby; paging; $count; summaries.
 * Every answer is checked against the expected ids.
 */
import t from 'tap'
import { startInProcess } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const { token } = await client.createTenant('q')
const q = (query: Record<string, string | number | boolean>) => ({ tenant: 'q', query: { token, ...query } })

const clientA = (await client.request('POST', '/v1/time/clients', { ...q({}), body: { name: 'Alpha Corp' } })).json.id as string
const clientB = (await client.request('POST', '/v1/time/clients', { ...q({}), body: { name: 'Beta Inc' } })).json.id as string
const rows = [
  { key: 'p1', name: 'Apollo', code: 'AP', client: clientA, timeBudget: 100, priceBudget: 10.5, billable: true, begins: '2024-01-01T00:00:00Z' },
  { key: 'p2', name: 'apollo mini', code: null, client: clientA, timeBudget: 200, priceBudget: null, billable: false, begins: '2024-06-15T12:00:00Z' },
  { key: 'p3', name: "O'Neil", code: 'ON', client: clientB, timeBudget: 300, priceBudget: 99, billable: true, begins: null },
  { key: 'p4', name: 'Zeta', code: 'ZE', client: null, timeBudget: null, priceBudget: 5, billable: null, begins: '2025-02-28T23:59:59Z' },
  { key: 'p5', name: 'Gemini', code: 'GE', client: clientB, timeBudget: 300, priceBudget: 1, billable: true, begins: '2023-12-31T23:00:00Z' },
]
const ids = new Map<string, string>()
for (const row of rows) {
  const { key, client: clientId, ...fields } = row
  const created = await client.request('POST', '/v1/time/projects', { ...q({}), body: { ...fields, ...(clientId === null ? {} : { client: { id: clientId } }) } })
  ids.set(key, created.json.id as string)
}
const keyOf = new Map([...ids].map(([key, id]) => [id, key]))

async function keys(filter: string, extra: Record<string, string | number> = {}): Promise<string[]> {
  const response = await client.request('GET', '/v1/time/projects', q({ $filter: filter, ...extra }))
  if (response.status !== 200) throw new Error(`${filter}: ${response.status} ${response.text}`)
  return (response.json as { id: string }[]).map((project) => keyOf.get(project.id) ?? '?')
}
const sorted = async (filter: string) => (await keys(filter)).sort()

t.test('comparisons, logic and arithmetic', async (t) => {
  t.same(await sorted("name eq 'Apollo'"), ['p1'])
  t.same(await sorted("name ne 'Apollo'"), ['p2', 'p3', 'p4', 'p5'])
  t.same(await sorted('timeBudget gt 200'), ['p3', 'p5'])
  t.same(await sorted('timeBudget ge 200'), ['p2', 'p3', 'p5'])
  t.same(await sorted('timeBudget lt 200'), ['p1'])
  t.same(await sorted('timeBudget le 200'), ['p1', 'p2'])
  t.same(await sorted('timeBudget eq 300 and priceBudget gt 50'), ['p3'])
  t.same(await sorted("name eq 'Zeta' or code eq 'AP'"), ['p1', 'p4'])
  t.same(await sorted('not (timeBudget eq 300)'), ['p1', 'p2', 'p4'])
  t.same(await sorted('timeBudget add 100 eq 400'), ['p3', 'p5'])
  t.same(await sorted('timeBudget mul 2 sub 100 eq 100'), ['p1'])
  t.same(await sorted('timeBudget div 100 eq 2'), ['p2'])
  t.same(await sorted('timeBudget mod 200 eq 100'), ['p1', 'p3', 'p5'])
  t.same(await sorted('-timeBudget lt -250'), ['p3', 'p5'])
  t.same(await sorted('priceBudget ge 10.5'), ['p1', 'p3'])
  t.same(await sorted('billable eq true'), ['p1', 'p3', 'p5'])
  t.same(await sorted('billable'), ['p1', 'p3', 'p5'], 'a bare boolean field')
  t.same(await sorted("begins ge datetime'2024-01-01T00:00:00Z' and begins lt datetime'2025-01-01T00:00'"), ['p1', 'p2'])
  t.same(await sorted("begins lt datetime'2024-01-01T00:00'"), ['p5'])
})

t.test('nulls', async (t) => {
  t.same(await sorted('code eq null'), ['p2'])
  t.same(await sorted('code ne null'), ['p1', 'p3', 'p4', 'p5'])
  t.same(await sorted('client eq null'), ['p4'])
  t.same(await sorted('billable eq null'), ['p4'])
  t.same(await sorted('timeBudget gt 0'), ['p1', 'p2', 'p3', 'p5'], 'a null never compares greater')
  t.same(await sorted("tolower(code) eq 'ap'"), ['p1'], 'a function of null is null')
  // A comparison with a null function result is false, eq/ne null too; not of a null boolean function stays false.
  t.same(await sorted("not startswith(code, 'A')"), ['p3', 'p4', 'p5'])
  t.same(await sorted("startswith(code, 'A') ne true"), ['p3', 'p4', 'p5'])
  t.same(await sorted("tolower(code) ne 'ap'"), ['p3', 'p4', 'p5'])
  t.same(await sorted('length(code) eq null'), [])
  t.same(await sorted("not (tolower(code) eq 'ap')"), ['p3', 'p4', 'p5'])
  // Arithmetic with null gives null, and comparisons with it are false likewise.
  t.same(await sorted('priceBudget add 1 ne 0'), ['p1', 'p3', 'p4', 'p5'])
  t.same(await sorted('priceBudget add 1 eq null'), [])
  t.same(await sorted('not (timeBudget mul 2 gt 400)'), ['p1', 'p2'])
})

t.test('string functions and escapes', async (t) => {
  t.same(await sorted("name eq 'O''Neil'"), ['p3'])
  t.same(await sorted("substringof('poll', name) eq true"), ['p1', 'p2'])
  t.same(await sorted("substringof('Poll', name)"), [], 'case-sensitive')
  t.same(await sorted("startswith(name, 'apo') eq true"), ['p2'])
  t.same(await sorted("endswith(name, 'ta')"), ['p4'])
  t.same(await sorted('length(name) eq 4'), ['p4'])
  t.same(await sorted("indexof(name, 'll') eq 3"), ['p1', 'p2'])
  t.same(await sorted("tolower(name) eq 'apollo'"), ['p1'])
  t.same(await sorted("toupper(name) eq 'ZETA'"), ['p4'])
  t.same(await sorted("concat(name, code) eq 'ZetaZE'"), ['p4'])
  t.same(await sorted("substring(name, 1) eq 'eta'"), ['p4'])
  t.same(await sorted("substring(name, 0, 3) eq 'Apo'"), ['p1'])
  t.same(await sorted("substring(name, 10) eq ''"), ['p1', 'p3', 'p4', 'p5'], 'a start past the end gives an empty string')
})

t.test('paths through references', async (t) => {
  t.same(await sorted("client/name eq 'Beta Inc'"), ['p3', 'p5'])
  t.same(await sorted(`client/id eq '${clientA}'`), ['p1', 'p2'])
  t.same(await sorted("owner/firstName eq 'Olive'"), ['p1', 'p2', 'p3', 'p4', 'p5'])
  t.same(await sorted("startswith(client/name, 'Al')"), ['p1', 'p2'])
})

t.test('time records: a two-hop path and start bounds in every datetime form', async (t) => {
  const me = (await client.request('GET', '/v1/users/@self', q({}))).json.id as string
  const projectOf = new Map([
    ['A', ids.get('p1')],
    ['B', ids.get('p3')],
    ['none', ids.get('p4')],
  ])
  const records = [
    { key: 'r1', project: 'A', start: '2024-06-10T09:00:00.000Z' },
    { key: 'r2', project: 'A', start: '2024-06-10T09:00:30.000Z' },
    { key: 'r3', project: 'B', start: '2024-06-10T09:00:30.250Z' },
    { key: 'r4', project: 'B', start: '2024-06-10T23:59:59.999Z' },
    { key: 'r5', project: 'none', start: '2024-06-11T00:00:00.000Z' },
    { key: 'r6', project: 'A', start: '2023-12-31T23:00:00.000Z' },
  ]
  const recordKeys = new Map<string, string>()
  for (const record of records) {
    const body = { user: { id: me }, project: { id: projectOf.get(record.project) }, start: `/Date(${Date.parse(record.start)})/`, duration: 60_000 }
    const created = await client.request('POST', '/v1/time/timerecords', { ...q({}), body })
    t.equal(created.status, 201, created.text)
    recordKeys.set(created.json.id as string, record.key)
  }
  const recordsMatching = async (filter: string, extra: Record<string, string> = {}) => {
    const response = await client.request('GET', '/v1/time/timerecords', q({ $filter: filter, ...extra }))
    if (response.status !== 200) throw new Error(`${filter}: ${response.status} ${response.text}`)
    return (response.json as { id: string }[]).map((record) => recordKeys.get(record.id) ?? '?')
  }
  const sortedRecords = async (filter: string) => (await recordsMatching(filter)).sort()

  // project/client/name: time record → project → client.
  t.same(await sortedRecords("project/client/name eq 'Alpha Corp'"), ['r1', 'r2', 'r6'])
  t.same(await sortedRecords("project/client/name eq 'Beta Inc'"), ['r3', 'r4'])
  t.same(await sortedRecords('project/client/name eq null'), ['r5'], 'a project without a client')
  t.same(await sortedRecords("startswith(project/client/name, 'Beta')"), ['r3', 'r4'])
  t.same(await sortedRecords(`project/client/id eq '${clientA}'`), ['r1', 'r2', 'r6'])

  for (const [filter, expected] of [
    // ge/lt ranges: minutes only, with seconds, with a fraction, with and without Z (no Z reads as UTC).
    ["start ge datetime'2024-06-10T09:00' and start lt datetime'2024-06-11T00:00'", ['r1', 'r2', 'r3', 'r4']],
    ["start ge datetime'2024-06-10T09:00Z' and start lt datetime'2024-06-11T00:00Z'", ['r1', 'r2', 'r3', 'r4']],
    ["start ge datetime'2024-06-10T09:00:30' and start lt datetime'2024-06-10T09:00:30.250Z'", ['r2']],
    ["start ge datetime'2024-06-10T09:00:30Z' and start lt datetime'2024-06-10T09:00:31'", ['r2', 'r3']],
    ["start ge datetime'2024-06-10T09:00:30.250Z' and start lt datetime'2024-06-11T00:00:00Z'", ['r3', 'r4']],
    ["start ge datetime'2024-06-10T09:00:30.251' and start lt datetime'2024-06-11T00:00:00'", ['r4']],
    ["start ge datetime'2024-06-10T00:00' and start lt datetime'2024-06-10T09:00:00.001Z'", ['r1']],
    ["start lt datetime'2024-06-10T09:00:00.001Z'", ['r1', 'r6']],
    ["start ge datetime'2024-06-11T00:00Z'", ['r5']],
    ["start gt datetime'2024-06-10T23:59:59.999'", ['r5']],
    ["start le datetime'2024-06-10T23:59:59.999Z' and start gt datetime'2024-06-10T09:00:30'", ['r3', 'r4']],
    ["start eq datetime'2024-06-10T09:00:30.250Z'", ['r3']],
    ["start ge datetime'2024-01-01T00:00' and start lt datetime'2025-01-01T00:00' and project/client/name eq 'Alpha Corp'", ['r1', 'r2']],
  ] as const) {
    t.same(await sortedRecords(filter), [...expected].sort(), filter)
  }
  t.same(
    await recordsMatching("start ge datetime'2024-06-10T09:00:30' and start lt datetime'2024-06-12T00:00'", { $orderby: 'start desc' }),
    ['r5', 'r4', 'r3', 'r2'],
    'a bounded range sorted by start desc',
  )
})

t.test('$orderby and paging', async (t) => {
  t.same(await keys('', { $orderby: 'name' }), ['p1', 'p5', 'p3', 'p4', 'p2'], 'code point order: upper case first')
  t.same(await keys('', { $orderby: 'name desc' }), ['p2', 'p4', 'p3', 'p5', 'p1'])
  t.same(await keys('', { $orderby: 'timeBudget desc, name asc' }), ['p5', 'p3', 'p2', 'p1', 'p4'], 'nulls last when descending')
  t.same(await keys('', { $orderby: 'timeBudget,name' }), ['p4', 'p1', 'p2', 'p5', 'p3'], 'nulls first when ascending')
  t.same(await keys('', { $orderby: 'client/name desc, name' }), ['p5', 'p3', 'p1', 'p2', 'p4'])
  t.same(await keys('', { $orderby: 'name', $top: 2, $skip: 1 }), ['p5', 'p3'])
  t.same(
    await keys('timeBudget eq 300', { $orderby: 'timeBudget' }),
    [ids.get('p3'), ids.get('p5')].sort().map((id) => keyOf.get(id as string) as string),
    'ties broken by id',
  )
  const count = await client.request('GET', '/v1/time/projects/$count', q({ $filter: 'timeBudget ge 200' }))
  t.equal(count.text, '3')
})

t.test('errors name the problem', async (t) => {
  for (const [filter, pattern] of [
    ["nme eq 'x'", /no field 'nme'/],
    ['name eq', /position/],
    ["name add 1 eq 'x'", /cannot/],
    ["length(name, 'x') eq 1", /.+/],
    ['year(begins) eq 2024', /year/],
  ] as const) {
    const response = await client.request('GET', '/v1/time/projects', q({ $filter: filter }))
    t.equal(response.status, 400, filter)
    t.equal(response.json.code, 'TL01-1105')
    t.match(response.json.message, pattern)
  }
  const long = await client.request('GET', '/v1/time/projects', q({ $filter: `name eq '${'x'.repeat(5000)}'` }))
  t.equal(long.status, 412)
  t.equal(long.json.code, 'TL01-9002')
  const deep = await client.request('GET', '/v1/time/projects', q({ $filter: `${'('.repeat(70)}name eq 'x'${')'.repeat(70)}` }))
  t.equal(deep.json.code, 'TL01-9002')
})

t.test('summaries', async (t) => {
  const plain = await client.request('GET', '/v1/time/projects/summary', q({}))
  t.same(plain.json, [{ key: '*', summaries: [{ name: 'count()', value: '5' }] }])
  const grouped = await client.request('GET', '/v1/time/projects/summary', q({ summary: 'client/id;count();sum(timeBudget);avg(timeBudget);min(priceBudget);max(priceBudget)' }))
  const byKey = new Map((grouped.json as { key: string; summaries: { name: string; value: string | null }[] }[]).map((entry) => [entry.key, entry.summaries]))
  t.same(byKey.get(clientA), [
    { name: 'count()', value: '2' },
    { name: 'sum(timeBudget)', value: '300' },
    { name: 'avg(timeBudget)', value: '150' },
    { name: 'min(priceBudget)', value: '10.5' },
    { name: 'max(priceBudget)', value: '10.5' },
  ])
  t.same(byKey.get('null')?.[0], { name: 'count()', value: '1' })
  const filtered = await client.request('GET', '/v1/time/projects/summary', q({ summary: 'sum(timeBudget)', $filter: 'billable eq true' }))
  t.same(filtered.json, [{ key: '*', summaries: [{ name: 'sum(timeBudget)', value: '700' }] }])
  const bad = await client.request('GET', '/v1/time/projects/summary', q({ summary: 'sum(name)' }))
  t.equal(bad.status, 400)
})
