/*
 * /metrics on the admin listener after real traffic: the text passes a strict
 * parser of the text format (helpers/prometheus.ts), every family the
 * issue lists is there with sane values, routes are patterns (never raw ids),
 * the mailbox depth sees a request waiting behind an exclusive job, every
 * answer carries an X-Request-Id that a 5xx also names in its description,
 * and a Server-Timing header with the server's time, waits included.
 */
import t from 'tap'
import { ApiError } from '../../src/domain/errors.js'
import { api } from '../helpers/api.js'
import { adminKeyOf, adminRequest } from '../helpers/admin.js'
import { parseMetrics, samplesOf, type Family } from '../helpers/prometheus.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '0' })
t.teardown(() => server.stop())
const { client, service } = server
const key = adminKeyOf(server.dataDir)
const { token } = await client.createTenant('acme')
const acme = api(client, 'acme', token)

async function scrape(): Promise<Map<string, Family>> {
  const answer = await adminRequest(service.adminPort, 'GET', '/metrics', key)
  if (answer.status !== 200) throw new Error(`/metrics answered ${answer.status}: ${answer.text}`)
  if (!String(answer.headers['content-type']).startsWith('text/plain; version=0.0.4')) throw new Error('wrong content type')
  return parseMetrics(answer.text)
}

t.test('the strict format check refuses broken texts', async (t) => {
  const good = '# HELP a_total things\n# TYPE a_total counter\na_total{x="1"} 2\n'
  t.equal(parseMetrics(good).get('a_total')?.samples[0]?.value, 2)
  const broken = {
    'no newline at the end': good.trimEnd(),
    'sample before TYPE': 'a_total 1\n',
    'bad metric name': '# HELP 1a x\n# TYPE 1a counter\n1a 1\n',
    'unquoted label': '# HELP a x\n# TYPE a gauge\na{x=1} 1\n',
    'repeated series': '# HELP a x\n# TYPE a gauge\na 1\na 2\n',
    'foreign sample': '# HELP a x\n# TYPE a gauge\nb 1\n',
    'no +Inf bucket': '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
    'not cumulative': '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="2"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n',
    'count differs from +Inf': '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 3\n',
    'no _sum': '# HELP h x\n# TYPE h histogram\nh_bucket{le="+Inf"} 1\nh_count 1\n',
    'bad escape': '# HELP a x\n# TYPE a gauge\na{x="\\q"} 1\n',
    'reserved label name': '# HELP a x\n# TYPE a gauge\na{__x="1"} 1\n',
    'TYPE twice': '# HELP a x\n# TYPE a gauge\n# TYPE a gauge\na 1\n',
    'family twice': '# HELP a x\n# TYPE a gauge\na 1\n# HELP a x\n# TYPE a gauge\n',
    'not a number': '# HELP a x\n# TYPE a gauge\na one\n',
  }
  const labelled = parseMetrics(
    '# HELP h x\n# TYPE h histogram\nh_bucket{m="a\\"b",le="1"} 1\nh_bucket{m="a\\"b",le="+Inf"} 2\nh_sum{m="a\\"b"} 3\nh_count{m="a\\"b"} 2\nh_bucket{m="c",le="1"} 0\nh_bucket{m="c",le="+Inf"} 0\nh_sum{m="c"} 0\nh_count{m="c"} 0\n',
  )
  t.same(
    labelled.get('h')?.samples.map((sample) => [sample.labels.m, sample.count, sample.sum, [...(sample.buckets ?? [])]]),
    [
      [
        'a"b',
        2,
        3,
        [
          [1, 1],
          [Infinity, 2],
        ],
      ],
      [
        'c',
        0,
        0,
        [
          [1, 0],
          [Infinity, 0],
        ],
      ],
    ],
    'labelled histogram series stay apart, label values unescaped',
  )
  for (const [label, text] of Object.entries(broken)) t.throws(() => parseMetrics(text), { name: 'MetricsFormatError' }, label)
})

t.test('after traffic every family is there with sane values', async (t) => {
  const ids: string[] = []
  for (let index = 0; index < 5; index += 1) ids.push(await acme.create('time/projects', { name: `Project ${index}` }))
  for (const id of ids) t.equal((await acme.get(`time/projects/${id}`)).status, 200)
  t.equal((await acme.get('time/projects/no-such-id')).status, 404)
  t.equal((await client.request('GET', `/v1/time/projects/${ids[0]}`, { tenant: 'acme' })).status, 400, 'no token')
  t.equal((await acme.get('time/projects/$count')).status, 200)
  t.equal((await acme.get('no/such/thing')).status, 404)
  await service.services.registry.get('acme')?.snapshot()

  const families = await scrape()
  for (const name of [
    'timeledger_http_requests_total',
    'timeledger_http_request_duration_seconds',
    'timeledger_mailbox_waiting_requests',
    'timeledger_mailbox_waiting_requests_max',
    'timeledger_log_commit_entries',
    'timeledger_log_flush_duration_seconds',
    'timeledger_log_entries',
    'timeledger_tenant_log_entries_since_snapshot',
    'timeledger_tenant_snapshot_age_seconds',
    'timeledger_tenants_in_memory',
    'timeledger_tenant_evictions_total',
    'process_resident_memory_bytes',
    'nodejs_heap_size_used_bytes',
    'nodejs_heap_size_total_bytes',
  ]) {
    t.ok(families.has(name), `${name} is there`)
  }
  t.equal(families.get('timeledger_http_requests_total')?.type, 'counter')
  t.equal(families.get('timeledger_http_request_duration_seconds')?.type, 'histogram')

  const item = { route: '/v1/time/projects/:id', scope: 'tenant', method: 'GET' }
  t.equal(samplesOf(families, 'timeledger_http_requests_total', { ...item, status: '200' })[0]?.value, 5, 'five reads by id')
  t.equal(samplesOf(families, 'timeledger_http_requests_total', { ...item, status: '404' })[0]?.value, 1, 'one not found')
  t.equal(samplesOf(families, 'timeledger_http_requests_total', { ...item, status: '400' })[0]?.value, 1, 'one without token, counted on its route')
  t.equal(samplesOf(families, 'timeledger_http_requests_total', { route: '/v1/time/projects', method: 'POST', status: '201' })[0]?.value, 5)
  t.equal(samplesOf(families, 'timeledger_http_requests_total', { route: '/v1/time/projects/$count', status: '200' })[0]?.value, 1)
  t.equal(samplesOf(families, 'timeledger_http_requests_total', { route: 'unmatched', status: '404' })[0]?.value, 1, 'an unknown path is unmatched')
  t.equal(samplesOf(families, 'timeledger_http_requests_total', { route: '/v1/register/signup', scope: 'public', status: '201' })[0]?.value, 1)
  const routes = samplesOf(families, 'timeledger_http_requests_total').map((sample) => sample.labels.route ?? '')
  t.notOk(
    routes.some((route) => ids.some((id) => route.includes(id)) || route.includes('no-such')),
    'no raw id in any route label',
  )

  const latency = samplesOf(families, 'timeledger_http_request_duration_seconds', item)[0]
  t.equal(latency?.count, 7, 'latency histogram counts every answer of the route')
  t.ok((latency?.sum ?? 0) > 0 && (latency?.sum ?? Infinity) < 30, 'latency sum is sane')

  const commits = samplesOf(families, 'timeledger_log_commit_entries')[0]
  t.ok((commits?.count ?? 0) >= 6, 'sign-up, confirm, login and five creates went through commits')
  t.ok((commits?.sum ?? 0) >= (commits?.count ?? Infinity), 'at least one entry per commit')
  t.equal(samplesOf(families, 'timeledger_log_flush_duration_seconds')[0]?.count, commits?.count, 'one flush time per commit')
  t.ok((samplesOf(families, 'timeledger_log_entries')[0]?.value ?? 0) >= 7, 'log entries held')
  t.equal(samplesOf(families, 'timeledger_tenant_log_entries_since_snapshot', { tenant: 'acme' })[0]?.value, 0, 'nothing since the snapshot')
  const age = samplesOf(families, 'timeledger_tenant_snapshot_age_seconds', { tenant: 'acme' })[0]?.value ?? -1
  t.ok(age >= 0 && age < 60, `snapshot age ${age} s`)
  t.equal(samplesOf(families, 'timeledger_tenants_in_memory')[0]?.value, 1)
  t.ok((samplesOf(families, 'process_resident_memory_bytes')[0]?.value ?? 0) > 10_000_000, 'rss')
  t.ok((samplesOf(families, 'nodejs_heap_size_used_bytes')[0]?.value ?? 0) > 1_000_000, 'heap')
})

t.test('mailbox depth counts requests waiting behind an exclusive job', async (t) => {
  const actor = service.services.registry.get('acme')
  if (actor === undefined) throw new Error('acme is not active')
  let release!: () => void
  const held = actor.exclusive(() => new Promise<void>((resolve) => (release = resolve)))
  const waiting = [acme.get('time/projects'), acme.get('time/projects/$count')]
  const deadline = Date.now() + 5000
  while (actor.waiting < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
  const families = await scrape()
  t.equal(samplesOf(families, 'timeledger_mailbox_waiting_requests')[0]?.value, 2)
  t.equal(samplesOf(families, 'timeledger_mailbox_waiting_requests_max')[0]?.value, 2)
  release()
  await held
  for (const answer of await Promise.all(waiting)) t.equal(answer.status, 200, 'the waiting requests are answered after the job')
  t.equal(samplesOf(await scrape(), 'timeledger_mailbox_waiting_requests')[0]?.value, 0)
})

t.test('Server-Timing on every answer: the time from the request to the answer, waits in the mailbox included', async (t) => {
  const durationMs = (header: unknown) => Number(/^app;dur=(\d+\.\d{3})$/.exec(String(header))?.[1] ?? Number.NaN)
  const quick = await acme.get('time/projects')
  const refused = await client.request('GET', '/nowhere', { tenant: 'acme' })
  t.ok(durationMs(quick.headers['server-timing']) >= 0, `an answer: ${String(quick.headers['server-timing'])}`)
  t.ok(durationMs(refused.headers['server-timing']) >= 0, 'an answer refused before routing')

  const actor = service.services.registry.get('acme')
  if (actor === undefined) throw new Error('acme is not active')
  const heldMs = 300
  const held = actor.exclusive(() => new Promise<void>((resolve) => setTimeout(resolve, heldMs)))
  const waited = await acme.get('time/projects')
  await held
  const waitedMs = durationMs(waited.headers['server-timing'])
  t.ok(waitedMs >= heldMs * 0.9 && waitedMs < 10_000, `an answer that waited behind a ${heldMs} ms job took ${waitedMs} ms`)
})

t.test('X-Request-Id on every answer; every 5xx names it in its description', async (t) => {
  const first = await acme.get('time/projects')
  const second = await client.request('GET', '/nowhere', { tenant: 'acme' })
  t.match(first.headers['x-request-id'], /^[\w-]+-[0-9a-z]+$/)
  t.match(second.headers['x-request-id'], /^[\w-]+-[0-9a-z]+$/, 'also on answers refused before routing')
  t.not(first.headers['x-request-id'], second.headers['x-request-id'])

  const { registry } = service.services
  const logged: unknown[] = []
  const originalError = console.error
  registry.open = () => {
    throw new Error('a bug on purpose')
  }
  console.error = (...args: unknown[]) => void logged.push(args)
  const failed = await acme.get('time/projects').finally(() => {
    console.error = originalError
    Reflect.deleteProperty(registry, 'open')
  })
  t.equal(failed.status, 500)
  t.equal(failed.json.code, 'TL01-9001')
  t.equal(failed.json.description, `request id ${failed.headers['x-request-id']}`)
  t.match(String((logged[0] as unknown[])[0]), String(failed.headers['x-request-id']), 'the error log names the same id')
  registry.open = () => Promise.reject(new ApiError('TL01-9011', 'cannot accept writes now', null, [], { 'Retry-After': '1' }))
  const unavailable = await acme.get('time/projects').finally(() => Reflect.deleteProperty(registry, 'open'))
  t.equal(unavailable.status, 503)
  t.equal(unavailable.json.description, `request id ${unavailable.headers['x-request-id']}`, 'every 5xx names its request id')
  t.equal(unavailable.headers['retry-after'], '1', 'and keeps its headers')
  t.equal((await acme.get('time/projects')).status, 200, 'back to normal')
})
