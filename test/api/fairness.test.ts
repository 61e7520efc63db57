/*
 * One tenant must not stall the others (ARCHITECTURE.md §2.4): a long read — a scan,
 * a count, a summary, a sort over many records — runs in slices
 * (tenants/slicedRead.ts) with the other tenants' requests answered between
 * them, while its own tenant is held (a write of that tenant waits, so the
 * read answers one state); and a tenant's heavy reads have a CPU budget per
 * second past which they get 429 with Retry-After, while its light reads
 * and writes go on.
 *
 * READ_SLICE_MS=0 makes every step of a read (a few hundred records) a
 * slice of its own, so a read of 20,000 records takes dozens of event-loop
 * turns: the observables below are orders of events, not times.
 */
import t from 'tap'
import { insertRecord } from '../../src/domain/recordMaking.js'
import { TimeRecord } from '../../src/domain/resources/timeRecord.js'
import type { TenantActor } from '../../src/tenants/tenantActor.js'
import { startInProcess, tempDataDir, type InProcessServer } from '../helpers/server.js'

const RECORDS = 20_000

async function bigTenant(server: InProcessServer, tenant: string): Promise<{ token: string; actor: TenantActor; userId: string }> {
  const { token } = await server.client.createTenant(tenant)
  const actor = server.service.services.registry.get(tenant)
  if (actor === undefined) throw new Error(`no tenant ${tenant}`)
  const userId = [...actor.state.collection('User').values()][0]?.id as string
  await actor.write((tx) => {
    for (let index = 0; index < RECORDS; index += 1) {
      insertRecord(tx, TimeRecord, {
        user: userId,
        start: Date.UTC(2026, 0, 1) + index * 60_000,
        duration: 60_000 * (1 + (index % 7)),
        description: `entry ${index % 13}`,
        billable: index % 3 === 0,
      })
    }
  })
  return { token, actor, userId }
}

/** Whether an exclusive job (a sliced read among them) holds the tenant now: its reads then wait. */
function held(actor: TenantActor): boolean {
  return actor.inspect(() => 0) instanceof Promise
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

t.test("a long read of one tenant lets another tenant's requests through between its slices", async (t) => {
  const server = await startInProcess(tempDataDir('fair-slices'), { READ_SLICE_MS: '0', TENANT_HEAVY_READ_MS_PER_S: '0' })
  t.teardown(() => server.stop())
  const big = await bigTenant(server, 'big')
  const { token: smallToken } = await server.client.createTenant('small')

  const heavyQuery = { token: big.token, $filter: "substringof('no such text', description) or billable eq true" }
  let heavyDone = false
  const heavy = server.client.request('GET', '/v1/time/timerecords/$count', { tenant: 'big', query: heavyQuery }).then((response) => {
    heavyDone = true
    return response
  })
  // The heavy read holds its tenant across event-loop turns (an unsliced read would answer before it ever shows).
  while (!held(big.actor) && !heavyDone) await nextTurn()
  t.notOk(heavyDone, 'the long read was still running when seen holding its tenant')

  const write = server.client.request('POST', '/v1/time/timerecords', {
    tenant: 'big',
    query: { token: big.token },
    body: { user: { id: big.userId }, start: '2026-06-01T08:00:00Z', duration: 60_000, description: 'written meanwhile', billable: true },
  })
  let writeDone = false
  void write.then(() => (writeDone = true))
  const small = await server.client.request('GET', '/v1/users/@self', { tenant: 'small', query: { token: smallToken } })
  t.equal(small.status, 200)
  t.notOk(heavyDone, "the other tenant's request was answered while the long read was still running")

  const answer = await heavy
  t.equal(answer.status, 200)
  t.equal(answer.text, String(Math.ceil(RECORDS / 3)), 'the long read counted one state: without the write that came during it')
  t.notOk(writeDone, 'the same tenant’s write waited for the read')
  t.equal((await write).status, 201)
  const after = await server.client.request('GET', '/v1/time/timerecords/$count', { tenant: 'big', query: heavyQuery })
  t.equal(after.text, String(Math.ceil(RECORDS / 3) + 1), 'the write is there afterwards')
})

t.test('sliced lists, counts, summaries and reports answer what the records say', async (t) => {
  const server = await startInProcess(tempDataDir('fair-answers'), { READ_SLICE_MS: '0', TENANT_HEAVY_READ_MS_PER_S: '0' })
  t.teardown(() => server.stop())
  const big = await bigTenant(server, 'answers')
  const all = [...big.actor.state.collection('TimeRecord').values()]
  const get = (path: string, query: Record<string, string>) => server.client.request('GET', path, { tenant: 'answers', query: { token: big.token, ...query } })

  const text = (rec: (typeof all)[number]) => String(rec.description)
  const sorted = [...all].sort((a, b) => (text(a) < text(b) ? 1 : text(a) > text(b) ? -1 : a.id < b.id ? -1 : 1))
  const page = await get('/v1/time/timerecords', { $orderby: 'description desc', $skip: '4990', $top: '20', no_expand: 'true' })
  t.same(
    (page.json as { id: string }[]).map((rec) => rec.id),
    sorted.slice(4990, 5010).map((rec) => rec.id),
    'a sorted page far down (past the sorted buffer: every match sorted in steps)',
  )
  const near = await get('/v1/time/timerecords', { $orderby: 'description desc', $top: '15', no_expand: 'true' })
  t.same(
    (near.json as { id: string }[]).map((rec) => rec.id),
    sorted.slice(0, 15).map((rec) => rec.id),
    'a sorted first page',
  )

  const matching = all.filter((rec) => String(rec.description).includes('entry 1') && rec.billable === true)
  const count = await get('/v1/time/timerecords/$count', { $filter: "substringof('entry 1', description) and billable eq true" })
  t.equal(count.text, String(matching.length), 'a filtered $count')

  const byDescription = new Map<string, { count: number; sum: number }>()
  for (const rec of all) {
    const group = byDescription.get(String(rec.description)) ?? { count: 0, sum: 0 }
    group.count += 1
    group.sum += rec.duration as number
    byDescription.set(String(rec.description), group)
  }
  const summary = await get('/v1/time/timerecords/summary', { summary: 'description;count();sum(duration)' })
  t.same(
    summary.json,
    [...byDescription.keys()].sort().map((key) => ({
      key,
      summaries: [
        { name: 'count()', value: String(byDescription.get(key)?.count) },
        { name: 'sum(duration)', value: String(byDescription.get(key)?.sum) },
      ],
    })),
    'a summary grouped by a field',
  )

  const report = await get('/v1/time/reports/singletotals', { $filter: 'billable eq true', range: '0' })
  const billable = all.filter((rec) => rec.billable === true)
  t.equal(report.json.count, billable.length, 'a scanned report counts the records')
  t.equal(
    report.json.time,
    billable.reduce((sum, rec) => sum + (rec.duration as number), 0),
    'and sums their time',
  )
})

t.test("past its budget a tenant's heavy reads get 429 with Retry-After; its light reads and writes go on", async (t) => {
  const server = await startInProcess(tempDataDir('fair-budget'), { READ_SLICE_MS: '0', TENANT_HEAVY_READ_MS_PER_S: '1' })
  t.teardown(() => server.stop())
  const big = await bigTenant(server, 'greedy')
  const other = await bigTenant(server, 'other')
  const heavy = (tenant: string, token: string) => server.client.request('GET', '/v1/time/timerecords/summary', { tenant, query: { token, summary: 'description;count()' } })

  let refused = null
  for (let attempt = 0; attempt < 100 && refused === null; attempt += 1) {
    const response = await heavy('greedy', big.token)
    if (response.status === 429) refused = response
    else t.equal(response.status, 200)
  }
  if (refused === null) throw new Error('the heavy reads were never refused')
  t.equal(refused.json.code, 'TL01-9010')
  t.match(refused.headers['retry-after'], /^[1-9]\d*$/, 'Retry-After in whole seconds')

  const self = await server.client.request('GET', '/v1/users/@self', { tenant: 'greedy', query: { token: big.token } })
  t.equal(self.status, 200, 'a light read (one user by its id) goes on')
  const page = await server.client.request('GET', '/v1/time/timerecords', { tenant: 'greedy', query: { token: big.token, $top: '5' } })
  t.equal(page.status, 200, 'a page read that ends in its first step goes on')
  const created = await server.client.request('POST', '/v1/time/timerecords', {
    tenant: 'greedy',
    query: { token: big.token },
    body: { user: { id: big.userId }, start: '2026-06-01T08:00:00Z', duration: 60_000, description: 'still writing' },
  })
  t.equal(created.status, 201, 'a write goes on')
  t.equal((await heavy('other', other.token)).status, 200, "another tenant's heavy read has its own budget")

  const batch = await server.client.request('POST', '/v1/batch', {
    tenant: 'greedy',
    query: { token: big.token },
    body: [
      { id: 'heavy', method: 'GET', path: '/v1/time/timerecords/$count?$filter=billable eq true' },
      { id: 'write', method: 'POST', path: '/v1/time/timerecords', body: JSON.stringify({ user: { id: big.userId }, start: '2026-06-02T08:00:00Z', duration: 60_000 }) },
    ],
  })
  t.equal(batch.status, 200)
  t.same(
    (batch.json as { id: string; code: number }[]).map((item) => [item.id, item.code]),
    [
      ['heavy', 429],
      ['write', 201],
    ],
    'inside a batch a heavy read spends the same budget; the batch goes on',
  )
})
