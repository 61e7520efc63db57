/*
 * Webhooks in cluster mode (issue 30): the directory's webhook marker is
 * kept in PostgreSQL, so when the node holding a tenant with a webhook is
 * killed (SIGKILL) while deliveries are behind (the receiver failing), the
 * other node wakes the tenant by itself once the lease ran out — no request
 * comes for it — and the deliveries go on from the webhook's cursor: the
 * receiver gets every event, counted once by X-TimeLedger-Event.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { leaseRowOf, nodeOfOwner, startCluster } from '../helpers/cluster.js'
import { startReceiver } from '../helpers/webhookReceiver.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  const TENANT = 'hookmove'
  const LEASE_MS = 1_500

  t.test('deliveries go on after the node holding the tenant dies, with no request for it', async (t) => {
    const receiver = await startReceiver()
    t.teardown(() => receiver.close())
    const cluster = await startCluster({
      nodes: 2,
      leaseMs: LEASE_MS,
      env: { RATE_LIMIT_REQUESTS: '0', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_RETRY_MAX_DELAY_MS: '200' },
    })
    t.teardown(() => cluster.stop())
    const { token } = await cluster.client.createTenant(TENANT)
    const request = (method: string, path: string, body?: unknown) => cluster.client.request(method, path, { tenant: TENANT, query: { token }, body, timeoutMs: 10_000 })
    const hook = await request('POST', '/v1/webhooks', { url: `${receiver.url}/hook`, resources: 'time/projects' })
    t.equal(hook.status, 201, hook.status === 201 ? 'the webhook is created' : hook.text)

    const ids: string[] = []
    for (let index = 0; index < 3; index += 1) {
      const id = randomUUID()
      t.equal((await request('POST', '/v1/time/projects', { id, name: `before ${index}` })).status, 201)
      ids.push(id)
    }
    const delivered = () => {
      const byEvent = new Map<string, string>()
      for (const received of receiver.received) {
        if (received.status !== 200) continue
        byEvent.set(String(received.headers['x-timeledger-event']), (JSON.parse(received.body) as { id: string }).id)
      }
      return [...byEvent.values()]
    }
    await receiver.until(() => delivered().length === 3)
    // The receiver fails from now on: the next events wait in the webhook's outbox (the log).
    receiver.answer = () => 500
    for (let index = 0; index < 5; index += 1) {
      const id = randomUUID()
      t.equal((await request('POST', '/v1/time/projects', { id, name: `behind ${index}` })).status, 201)
      ids.push(id)
    }
    await receiver.until((received) => received.some((r) => r.status === 500))
    const holder = nodeOfOwner(cluster.nodes, (await leaseRowOf(cluster.databaseUrl, TENANT))?.owner)
    if (holder === undefined) throw new Error('no node holds the tenant')
    holder.child.kill('SIGKILL')
    receiver.answer = () => 200
    await receiver.until(() => ids.every((id) => delivered().includes(id)), 30_000)
    const after = await leaseRowOf(cluster.databaseUrl, TENANT)
    t.not(nodeOfOwner(cluster.nodes, after?.owner), holder, 'the other node took the tenant over by itself')
    t.same(new Set(delivered()), new Set(ids), 'every event delivered (counted once by X-TimeLedger-Event)')
    t.equal(delivered().length, ids.length, 'no event delivered twice under two ids')
  })
}
