/*
 * Webhooks over HTTP (issue 30): a real server, a real receiver. Creating
 * one (superusers only; the made secret shown once), the checks of a
 * webhook's fields (url, resources, $filter, private addresses without
 * WEBHOOK_ALLOW_PRIVATE), delivery of created/updated/deleted events in
 * order with the event's JSON and a signature the secret verifies, the
 * $filter honoured, a retry after the receiver answered 500 twice (the
 * delivery log says 3 attempts, delivered), and deactivation stopping
 * deliveries.
 */
import t from 'tap'
import { verifySignature } from '../../src/webhooks/signature.js'
import { api, newUser } from '../helpers/api.js'
import type { AnswerJson } from '../helpers/http.js'
import { startInProcess } from '../helpers/server.js'
import { startReceiver, type Received } from '../helpers/webhookReceiver.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess(undefined, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '50', RATE_LIMIT_REQUESTS: '0' })
t.teardown(() => server.stop())
const receiver = await startReceiver()
t.teardown(() => receiver.close())
const { client } = server
const owner = api(client, 'hooks', (await client.createTenant('hooks')).token)
const worker = await newUser(client, 'hooks', owner, 'Walt')

const eventsAt = (path: string) => (received: readonly Received[]) => received.filter((r) => r.path === path && r.status === 200)
const json = (r: Received) => JSON.parse(r.body) as Record<string, AnswerJson>

t.test('only superusers create and see webhooks', async (t) => {
  const refused = await worker.api.post('webhooks', { url: `${receiver.url}/x` })
  t.equal(refused.status, 403, refused.text)
  const created = await owner.post('webhooks', { url: `${receiver.url}/x`, active: false })
  t.equal(created.status, 201, created.text)
  t.match(created.json.secret, /^\S{20,}$/, 'the made secret is shown once')
  const read = await owner.get(`webhooks/${created.json.id}`)
  t.equal(read.json.secret, undefined, 'and never again')
  t.equal(read.json.active, false)
  t.equal(typeof read.json.deliveredEvent, 'string')
  t.equal((await worker.api.get('webhooks')).json.length, 0, 'a user who is no admin lists none')
  t.equal((await worker.api.get(`webhooks/${created.json.id}`)).status, 404)
})

t.test('what a webhook may say', async (t) => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['not a URL', { url: 'not a url at all' }, /not a URL/],
    ['not http', { url: 'ftp://example.com/hook' }, /http or https/],
    ['credentials', { url: 'http://me:pw@example.com/hook' }, /credentials/],
    ['unknown resource', { url: `${receiver.url}/x`, resources: 'time/nothing' }, /time\/nothing/],
    ['webhooks themselves', { url: `${receiver.url}/x`, resources: 'webhooks' }, /never delivered/],
    ['bad $filter', { url: `${receiver.url}/x`, resources: 'time/projects', filter: "nosuchfield eq 'x'" }, /filter/i],
    ['$filter without resources', { url: `${receiver.url}/x`, filter: "name eq 'x'" }, /needs resources/],
  ]
  for (const [what, body, message] of cases) {
    const answer = await owner.post('webhooks', body)
    t.equal(answer.status, 400, `${what}: ${answer.text}`)
    t.match(answer.json.message, message, what)
  }
  const url = await owner.create('webhooks', { url: `${receiver.url}/x`, resources: 'time/projects', active: false })
  const current = (await owner.get(`webhooks/${url}`)).json
  const put = await owner.put(`webhooks/${url}`, { version: current.version, filter: "nosuchfield eq 'x'" })
  t.equal(put.status, 400, 'a PUT is checked against the stored resources')
  const set = await owner.post(`webhooks/${url}/$set`, undefined, { resources: 'time/nothing' })
  t.equal(set.status, 400, '$set is checked too')
})

t.test('private addresses are refused without WEBHOOK_ALLOW_PRIVATE', async (t) => {
  const strict = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '0' })
  t.teardown(() => strict.stop())
  const admin = api(strict.client, 'strict', (await strict.client.createTenant('strict')).token)
  for (const url of ['http://127.0.0.1:9/x', 'http://[::1]/x', 'http://10.1.2.3/x', 'http://169.254.169.254/latest', 'http://0x7f.1/x', 'http://localhost/x', 'http://[::ffff:192.168.0.1]/x']) {
    const answer = await admin.post('webhooks', { url })
    t.equal(answer.status, 400, `${url}: ${answer.text}`)
    t.equal(answer.json.code, 'TL01-1105')
  }
})

t.test('events are delivered in order, signed, as the feed writes them', async (t) => {
  const secret = 'a-secret-of-sixteen-or-more'
  const hook = await owner.post('webhooks', { url: `${receiver.url}/all`, resources: 'time/projects', secret })
  t.equal(hook.status, 201, hook.text)
  t.equal(hook.json.secret, undefined, 'a given secret is not echoed')
  const project = await owner.create('time/projects', { name: 'Alpha' })
  const version = (await owner.get(`time/projects/${project}`)).json.version as number
  t.equal((await owner.put(`time/projects/${project}`, { name: 'Alpha 2', version })).status, 200)
  t.equal((await owner.del(`time/projects/${project}`)).status, 200)
  const got = eventsAt('/all')(await receiver.until((r) => eventsAt('/all')(r).length >= 3))
  t.same(
    got.map((r) => json(r).kind),
    ['created', 'updated', 'deleted'],
  )
  t.same(
    got.map((r) => json(r).id),
    [project, project, project],
  )
  t.equal(json(got[1] as Received).object.name, 'Alpha 2')
  t.equal(json(got[0] as Received).resource, 'time/projects')
  for (const r of got) {
    const body = json(r)
    t.equal(r.headers['x-timeledger-event'], `${body.seq}.${body.op}`)
    t.equal(r.headers['x-timeledger-webhook'], hook.json.id)
    t.equal(r.headers['content-type'], 'application/json')
    t.ok(verifySignature(secret, r.body, String(r.headers['x-timeledger-signature']), Math.floor(Date.now() / 1000)), 'the signature verifies')
    t.notOk(verifySignature('another-secret-entirely', r.body, String(r.headers['x-timeledger-signature']), Math.floor(Date.now() / 1000)))
    t.notOk(verifySignature(secret, `${r.body} `, String(r.headers['x-timeledger-signature']), Math.floor(Date.now() / 1000)))
  }
  const ids = got.map((r) => r.headers['x-timeledger-event'] as string)
  t.same(
    [...ids].sort((a, b) => Number(a.split('.')[0]) - Number(b.split('.')[0])),
    ids,
    'in log order',
  )
  // The cursor and the delivery log.
  await new Promise((resolve) => setTimeout(resolve, 100))
  const state = (await owner.get(`webhooks/${hook.json.id}`)).json
  t.equal(state.deliveredEvent, ids[2])
  t.equal(state.lastError, null)
  const log = (await owner.get(`webhooks/${hook.json.id}/deliveries`, { $orderby: 'createdAt' })).json as Record<string, AnswerJson>[]
  t.same(
    log.map((d) => [d.event, d.status, d.attempts, d.kind]),
    ids.map((id, at) => [id, 'delivered', 1, ['created', 'updated', 'deleted'][at]]),
  )
  t.equal((await owner.get('webhookdeliveries', { $filter: `webhook/id eq '${hook.json.id}'` })).json.length, 3)
  t.equal((await worker.api.get('webhookdeliveries')).json.length, 0, 'a user who is no admin sees no delivery')
  t.equal((await owner.post('webhookdeliveries', { event: '1.0' })).status >= 400, true, 'the delivery log is not written over the API')
  await owner.put(`webhooks/${hook.json.id}`, { version: state.version, active: false })
})

t.test('$filter is honoured', async (t) => {
  const hook = await owner.create('webhooks', { url: `${receiver.url}/filtered`, resources: 'time/clients', filter: "name eq 'Wanted'" })
  await owner.create('time/clients', { name: 'Unwanted' })
  const wanted = await owner.create('time/clients', { name: 'Wanted' })
  await owner.create('time/projects', { name: 'Not a client' })
  const got = eventsAt('/filtered')(await receiver.until((r) => eventsAt('/filtered')(r).length >= 1))
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.same(
    eventsAt('/filtered')(receiver.received).map((r) => json(r).id),
    [wanted],
  )
  t.equal(got.length, 1)
  const version = (await owner.get(`webhooks/${hook}`)).json.version
  await owner.put(`webhooks/${hook}`, { version, active: false })
})

t.test('a receiver that answers 500 twice gets the event a third time', async (t) => {
  let failures = 0
  receiver.answer = ({ path }) => (path === '/flaky' && failures++ < 2 ? 500 : 200)
  t.teardown(() => {
    receiver.answer = () => 200
  })
  const hook = await owner.create('webhooks', { url: `${receiver.url}/flaky`, resources: 'time/worktypes' })
  const workType = await owner.create('time/worktypes', { name: 'Flaky' })
  await receiver.until((r) => eventsAt('/flaky')(r).length >= 1)
  const tries = receiver.received.filter((r) => r.path === '/flaky')
  t.same(
    tries.map((r) => r.status),
    [500, 500, 200],
  )
  t.same(new Set(tries.map((r) => r.headers['x-timeledger-event'])).size, 1, 'the same event each time')
  t.equal(json(tries[2] as Received).id, workType)
  await new Promise((resolve) => setTimeout(resolve, 100))
  const [delivery] = (await owner.get(`webhooks/${hook}/deliveries`)).json as Record<string, AnswerJson>[]
  t.equal(delivery?.status, 'delivered')
  t.equal(delivery?.attempts, 3)
  t.equal(delivery?.responseStatus, 200)
  t.ok(delivery?.deliveredAt)
  const state = (await owner.get(`webhooks/${hook}`)).json
  t.equal(state.lastError, null)
  t.equal(state.failingSince, null)
  await owner.put(`webhooks/${hook}`, { version: state.version, active: false })
})

t.test('deactivation stops deliveries, activation goes on after the cursor', async (t) => {
  const hook = await owner.create('webhooks', { url: `${receiver.url}/toggled`, resources: 'time/tags' })
  await owner.create('time/tags', { name: 'one' })
  await receiver.until((r) => eventsAt('/toggled')(r).length >= 1)
  await new Promise((resolve) => setTimeout(resolve, 100))
  const version = (await owner.get(`webhooks/${hook}`)).json.version
  t.equal((await owner.put(`webhooks/${hook}`, { version, active: false })).status, 200)
  await owner.create('time/tags', { name: 'two' })
  await new Promise((resolve) => setTimeout(resolve, 400))
  t.equal(eventsAt('/toggled')(receiver.received).length, 1, 'nothing while inactive')
  t.equal((await owner.post(`webhooks/${hook}/$set`, undefined, { active: true })).status, 200)
  await owner.create('time/tags', { name: 'three' })
  const got = eventsAt('/toggled')(await receiver.until((r) => eventsAt('/toggled')(r).length >= 3))
  t.same(
    got.map((r) => json(r).object.name),
    ['one', 'two', 'three'],
    'the event written while inactive comes once active again, in order',
  )
})
