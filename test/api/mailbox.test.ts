/*
 * A tenant's mailbox is bounded (TENANT_MAILBOX_MAX_REQUESTS,
 * src/tenants/mailbox.ts): while a job holds the tenant — here a batch
 * whose log entry is held back by a slow log — up to the limit of requests
 * wait for it, and the next one, read or write, is answered 503 TL01-9011
 * with Retry-After at once, with nothing applied, while another tenant is
 * served. Once the job ends, the requests that waited are answered and the
 * tenant serves again.
 */
import t from 'tap'
import { api } from '../helpers/api.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await sleep(5)
  }
}

t.test('past TENANT_MAILBOX_MAX_REQUESTS a request to a held tenant gets 503 with Retry-After; another tenant is served', async (t) => {
  const server = await startInProcess(tempDataDir('mailbox'), { TENANT_MAILBOX_MAX_REQUESTS: '2', IDLE_EVICT_MS: '0' })
  t.teardown(() => server.stop())
  const { client } = server
  const held = api(client, 'held', (await client.createTenant('held')).token)
  const other = api(client, 'other', (await client.createTenant('other')).token)
  const { registry } = server.service.services
  const actor = registry.get('held')
  if (actor === undefined) throw new Error('no tenant')

  // A slow log for this tenant: its appends wait until `flow()` (the other tenant's go on).
  const store = registry.store
  const realAppend = store.append.bind(store)
  let flow!: () => void
  const flowing = new Promise<void>((resolve) => (flow = resolve))
  let heldBack = 0
  store.append = (tenant, seq, entry) => {
    if (tenant !== 'held') return realAppend(tenant, seq, entry)
    heldBack += 1
    return flowing.then(() => realAppend(tenant, seq, entry))
  }

  const batch = client.request('POST', '/v1/batch', {
    tenant: 'held',
    query: { token: held.token },
    body: [{ id: 'a', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'in the batch' }) }],
  })
  await until(() => heldBack === 1, 'the batch holds the tenant, waiting for its log entry')
  const waiting = [held.get('time/projects'), held.get('time/projects')]
  await until(() => actor.waiting === 2, 'two requests wait in the mailbox')

  let answered = false
  const overRead = held.get('time/projects').finally(() => (answered = true))
  await until(() => answered || actor.waiting > 2, 'the third request is answered or waits')
  t.equal(actor.waiting, 2, 'the third request does not wait')
  // Without a limit it waits: the log flows, so that the test ends (failed) instead of hanging.
  if (!answered) flow()
  const refusedRead = await overRead
  t.equal(refusedRead.status, 503, 'a read past the limit is refused')
  t.equal(refusedRead.json.code, 'TL01-9011')
  t.equal(refusedRead.headers['retry-after'], '1', 'with Retry-After')
  t.match(refusedRead.json.message, /TENANT_MAILBOX_MAX_REQUESTS/, 'naming the limit')
  const refusedWrite = await held.post('time/projects', { name: 'refused' })
  t.equal(refusedWrite.status, 503, 'so is a write')
  t.equal(refusedWrite.headers['retry-after'], '1')

  const served = await other.get('time/projects')
  t.equal(served.status, 200, 'another tenant is served meanwhile')

  flow()
  t.equal((await batch).status, 200, 'the batch ends once its entry is on disk')
  for (const answer of await Promise.all(waiting)) {
    t.equal(answer.status, 200, 'a request that waited is answered')
    t.same(
      answer.json.map((project: { name: string }) => project.name),
      ['in the batch'],
      'after the batch, and without the refused write',
    )
  }
  t.equal((await held.get('time/projects')).status, 200, 'the tenant serves again')
  t.equal(actor.waiting, 0)
})
