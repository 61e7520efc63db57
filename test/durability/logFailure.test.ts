/*
 * When the log cannot be written (disk or map full), nothing is
 * acknowledged and nothing stays applied in memory: the writes of the failed
 * commit answer 503 TL01-9011 with Retry-After, the tenant reloads what is on
 * disk, reads keep working, and writes resume without a restart once the log
 * accepts appends again. The failure is injected into the log store.
 */
import t from 'tap'
import { startInProcess } from '../helpers/server.js'

t.test('a failed append is not applied and writes resume afterwards', async (t) => {
  const server = await startInProcess()
  t.teardown(() => server.stop())
  const { client } = server
  const { token } = await client.createTenant('full')
  const q = { tenant: 'full', query: { token } }
  const kept = await client.request('POST', '/v1/time/projects', { ...q, body: { name: 'kept' } })
  t.equal(kept.status, 201)

  const store = server.service.services.registry.store
  const realAppend = store.append.bind(store)
  let failing = true
  store.append = async (...args: Parameters<typeof store.append>) => {
    if (failing) throw Object.assign(new Error('MDB_MAP_FULL: Environment mapsize limit reached'), { code: 'MDB_MAP_FULL' })
    return realAppend(...args)
  }
  const attempts = await Promise.all(['lost-1', 'lost-2', 'lost-3'].map((name) => client.request('POST', '/v1/time/projects', { ...q, body: { name } })))
  for (const attempt of attempts) {
    t.equal(attempt.status, 503)
    t.equal(attempt.json.code, 'TL01-9011')
    t.equal(attempt.headers['retry-after'], '1')
  }
  const read = await client.request('GET', '/v1/time/projects', { ...q, query: { token, $orderby: 'name' } })
  t.equal(read.status, 200, 'reads keep working')
  t.same(
    (read.json as { name: string }[]).map((project) => project.name),
    ['kept'],
    'nothing of the failed writes is visible',
  )

  failing = false
  const resumed = await client.request('POST', '/v1/time/projects', { ...q, body: { name: 'after' } })
  t.equal(resumed.status, 201, 'writes resume without a restart')
  await server.stop()
  const again = await startInProcess(server.dataDir)
  t.teardown(() => again.stop())
  const token2 = await again.client.login('full', 'owner@full.test', 'secret-password')
  const names = (await again.client.request('GET', '/v1/time/projects', { tenant: 'full', query: { token: token2, $orderby: 'name' } })).json as { name: string }[]
  t.same(
    names.map((project) => project.name),
    ['after', 'kept'],
    'after a restart too',
  )
})
