/*
 * The webhooks' outbox survives kill -9 (issue 30). A server in a child
 * process has a webhook whose receiver answers 500: the writes are
 * acknowledged, the deliveries retried. The server is killed with SIGKILL
 * and started again on the same data directory, with the receiver now
 * answering 200, and no request made: every event comes, in order, none
 * missing (the tenant is woken at start because the directory marks it).
 * Then again with the receiver answering 200 throughout and the kill right
 * after a burst of writes: every event comes once the server is back, in
 * order; an event may come twice only when it was in flight at the kill
 * (the test de-duplicates by X-TimeLedger-Event).
 */
import t from 'tap'
import { api } from '../helpers/api.js'
import { killHard, spawnServer, tempDataDir, type ChildServer } from '../helpers/server.js'
import { startReceiver, type Received } from '../helpers/webhookReceiver.js'

const ENV = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_RETRY_MAX_DELAY_MS: '200', RATE_LIMIT_REQUESTS: '0' }
const dataDir = tempDataDir('webhook-outbox')
const receiver = await startReceiver()
t.teardown(() => receiver.close())

let server: ChildServer = await spawnServer(dataDir, ENV)
t.teardown(() => killHard(server))

const tenant = 'outbox'
const owner = api(server.client, tenant, (await server.client.createTenant(tenant)).token)
const hook = await owner.create('webhooks', { url: `${receiver.url}/hook`, resources: 'time/tags' })

/** The names of the tags delivered with 200, once each, in the order of their first delivery. */
function deliveredNames(received: readonly Received[]): string[] {
  const seen = new Set<string>()
  const names: string[] = []
  for (const r of received) {
    const event = String(r.headers['x-timeledger-event'])
    if (r.status !== 200 || seen.has(event)) continue
    seen.add(event)
    names.push(JSON.parse(r.body).object.name as string)
  }
  return names
}

t.test('events acknowledged while the receiver fails are delivered after kill -9 and a restart', async (t) => {
  receiver.answer = () => 500
  const names = Array.from({ length: 20 }, (_, index) => `failing-${index}`)
  for (const name of names) await owner.create('time/tags', { name })
  await receiver.until((r) => r.length >= 3)
  t.equal(deliveredNames(receiver.received).length, 0, 'nothing was accepted before the kill')
  await killHard(server)
  receiver.answer = () => 200
  server = await spawnServer(dataDir, ENV)
  const got = await receiver.until((r) => deliveredNames(r).length >= names.length, 30_000)
  t.same(deliveredNames(got), names, 'every event, in order, without a request to the tenant')
  const accepted = got.filter((r) => r.status === 200).length
  t.ok(accepted <= names.length + 1, `at most the one in flight twice (${accepted} accepted)`)
})

t.test('a burst of writes, kill -9 while delivering: every event after the restart, in order', async (t) => {
  receiver.received.length = 0
  receiver.answer = () => 200
  const client = api(server.client, tenant, await server.client.login(tenant, `owner@${tenant}.test`, 'secret-password'))
  const names = Array.from({ length: 40 }, (_, index) => `burst-${index}`)
  await Promise.all(names.slice(0, 20).map((name) => client.create('time/tags', { name })))
  for (const name of names.slice(20)) await client.create('time/tags', { name })
  await killHard(server)
  const beforeRestart = deliveredNames(receiver.received).length
  server = await spawnServer(dataDir, ENV)
  const got = await receiver.until((r) => new Set(deliveredNames(r)).size >= names.length, 30_000)
  const delivered = deliveredNames(got)
  t.same(new Set(delivered), new Set(names), `none missing (${beforeRestart} were delivered before the kill)`)
  t.same(delivered.slice(20), names.slice(20), 'the sequential writes came in their order')
  const firstIds = [...new Set(got.filter((r) => r.status === 200).map((r) => String(r.headers['x-timeledger-event'])))]
  const seqs = firstIds.map((id) => Number(id.split('.')[0]))
  t.ok(
    seqs.every((seq, at) => at === 0 || seq > (seqs[at - 1] as number)),
    'in log order (the concurrent writes too)',
  )
  const state = await api(server.client, tenant, await server.client.login(tenant, `owner@${tenant}.test`, 'secret-password')).get(`webhooks/${hook}`)
  t.match(state.json.deliveredEvent, /^\d+\.\d+$/)
})
