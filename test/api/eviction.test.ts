/*
 * Idle eviction and the MAX_ACTIVE_TENANTS cap, against a real server:
 *  - an idle tenant is snapshotted and put to rest by the periodic sweep,
 *    and its next request finds all its data;
 *  - with eviction as eager as it gets (IDLE_EVICT_MS=1, plus forced
 *    evictions in a loop) concurrent writes, reads and logins (which hold
 *    the tenant across event-loop turns while the password hash runs) lose nothing,
 *    and a restart shows every acknowledged write;
 *  - past MAX_ACTIVE_TENANTS the least recently used tenants go to rest;
 *  - kill -9 of a server whose tenant was evicted (and woken and written
 *    since) loses nothing.
 */
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { api, type Api } from '../helpers/api.js'
import { adminKeyOf, adminRequest } from '../helpers/admin.js'
import { parseMetrics, samplesOf } from '../helpers/prometheus.js'
import { killHard, spawnServer, startInProcess, tempDataDir, type ChildServer } from '../helpers/server.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await sleep(10)
  }
}

t.test('an idle tenant is evicted by the sweep and comes back with its data', async (t) => {
  const server = await startInProcess(tempDataDir('evict-idle'), { IDLE_EVICT_MS: '300' })
  t.teardown(() => server.stop())
  const { registry } = server.service.services
  const { token } = await server.client.createTenant('idle')
  const acme = api(server.client, 'idle', token)
  const id = await acme.create('time/projects', { name: 'Kept while resting' })
  t.equal(registry.activeCount, 1)
  await until(() => registry.activeCount === 0, 'the idle tenant is put to rest')
  t.equal(registry.evictions, 1)
  const snapshots = fs.readdirSync(path.join(server.dataDir, 'snapshots', 'idle'))
  t.equal(snapshots.filter((file) => file.endsWith('.tlsnap')).length, 1, 'snapshotted before it was dropped')

  const read = await acme.get(`time/projects/${id}`)
  t.equal(read.status, 200, 'the next request activates it again')
  t.equal(read.json.name, 'Kept while resting')
  t.equal(registry.activeCount, 1)
  const later = await acme.create('time/projects', { name: 'Written after waking' })
  t.same(await acme.ids('time/projects'), [id, later].sort())
  t.equal(registry.get('idle')?.logEntriesSinceSnapshot, 1, 'only the new write is outside the snapshot')

  await until(() => registry.activeCount === 0, 'it rests again')
  t.equal(registry.evictions, 2)
  t.same(await acme.ids('time/projects'), [id, later].sort(), 'still all there')
})

t.test('a tenant in use is not evicted; an unchanged one is not snapshotted again', async (t) => {
  const server = await startInProcess(tempDataDir('evict-busy'), { IDLE_EVICT_MS: '0' })
  t.teardown(() => server.stop())
  const { registry } = server.service.services
  const { token } = await server.client.createTenant('busy')
  const busy = api(server.client, 'busy', token)
  await busy.create('time/projects', { name: 'one' })
  t.same(await server.service.sweepIdle(), [], 'IDLE_EVICT_MS=0: never')
  const actor = registry.get('busy')
  if (actor === undefined) throw new Error('no actor')
  let release!: () => void
  const held = actor.exclusive(() => new Promise<void>((resolve) => (release = resolve)))
  const waiting = busy.get('time/projects')
  await until(() => actor.waiting === 1, 'a request waits')
  const evicting = registry.evict('busy')
  release()
  await held
  t.equal(await evicting, false, 'a waiting request keeps the tenant in memory')
  t.equal((await waiting).status, 200)
  t.equal(await registry.evict('busy'), true, 'once nobody waits it goes')
  const snapshotDir = path.join(server.dataDir, 'snapshots', 'busy')
  const before = fs.readdirSync(snapshotDir)
  t.equal((await busy.get('time/projects')).json.length, 1)
  t.equal(await registry.evict('busy'), true)
  t.same(fs.readdirSync(snapshotDir), before, 'no new snapshot when nothing was logged since')
})

t.test('a request holding the tenant across an eviction and a new request share one live actor', async (t) => {
  const server = await startInProcess(tempDataDir('evict-held'), { IDLE_EVICT_MS: '0' })
  t.teardown(() => server.stop())
  const { registry } = server.service.services
  const { token } = await server.client.createTenant('held')
  const held = api(server.client, 'held', token)
  const inFlight = registry.get('held')
  if (inFlight === undefined) throw new Error('no actor')
  t.equal(await registry.evict('held'), true)
  t.ok(inFlight.resting, 'the held actor rests')
  // The request in flight writes through the reference it took before the eviction ...
  const note = {
    id: 'held-note',
    version: 1,
    group: 'g',
    itemKey: 'k',
    publicScope: true,
    owner: null,
    contentType: 'text/plain',
    content: 'written through the old reference',
    createdAt: 0,
    updatedAt: 0,
    trashItem: null,
  }
  await inFlight.write((tx) => tx.put('StorageEntry', note))
  t.notOk(inFlight.resting, 'touching it loaded it again')
  // ... and a new request must see that write, and write on top of it.
  t.equal(registry.get('held'), inFlight, 'the registry hands out the same actor, not a second one')
  const created = await held.create('time/projects', { name: 'after' })
  t.ok(await inFlight.read((state) => state.get('Project', created)), 'the old reference sees the new write')
  t.ok(await registry.get('held')?.read((state) => state.get('StorageEntry', 'held-note')), 'the new request sees the old reference’s write')
  t.equal(registry.activeCount, 1)
})

t.test('eviction racing concurrent requests loses nothing', async (t) => {
  const dataDir = tempDataDir('evict-race')
  const server = await startInProcess(dataDir, { IDLE_EVICT_MS: '1', RATE_LIMIT_REQUESTS: '0' })
  const { registry } = server.service.services
  const tenants = ['race1', 'race2']
  const apis: Api[] = []
  for (const tenant of tenants) apis.push(api(server.client, tenant, (await server.client.createTenant(tenant)).token))
  let forcing = true
  const forced = (async () => {
    let count = 0
    while (forcing) {
      for (const tenant of tenants) if (await registry.evict(tenant).catch(() => false)) count += 1
      await sleep(1)
    }
    return count
  })()
  const acknowledged = new Map<string, string[]>(tenants.map((tenant) => [tenant, []]))
  let failures = 0
  for (let wave = 0; wave < 25; wave += 1) {
    const work = apis.flatMap((tenantApi, index) => {
      const tenant = tenants[index] as string
      const writes = Array.from({ length: 6 }, async (_, item) => {
        const created = await tenantApi.post('time/projects', { name: `w${wave}-${item}` })
        if (created.status === 201) acknowledged.get(tenant)?.push(created.json.id as string)
        else failures += 1
      })
      const reads = Array.from({ length: 3 }, async () => {
        const listed = await tenantApi.get('time/projects', { $top: 1000 })
        if (listed.status !== 200) failures += 1
      })
      // A login waits for the password check between reading the tenant and writing its token: a request that spans turns.
      const logins = Array.from({ length: 2 }, async (_, item) => {
        const token = await server.client.login(tenant, `owner@${tenant}.test`, 'secret-password')
        const created = await api(server.client, tenant, token).post('time/projects', { name: `l${wave}-${item}` })
        if (created.status === 201) acknowledged.get(tenant)?.push(created.json.id as string)
        else failures += 1
      })
      return [...writes, ...reads, ...logins]
    })
    await Promise.all(work)
    await sleep(wave % 3 === 0 ? 15 : 2)
  }
  forcing = false
  const forcedEvictions = await forced
  t.equal(failures, 0, 'every request was answered with success')
  t.ok(registry.evictions >= 10, `tenants were put to rest ${registry.evictions} times (${forcedEvictions} forced) during the load`)
  for (const [index, tenant] of tenants.entries()) {
    t.same(await (apis[index] as Api).ids('time/projects', { $top: 1000 }), [...(acknowledged.get(tenant) ?? [])].sort(), `${tenant}: every acknowledged write is there`)
  }
  await server.stop()

  const again = await startInProcess(dataDir, { IDLE_EVICT_MS: '0' })
  t.teardown(() => again.stop())
  for (const tenant of tenants) {
    const token = await again.client.login(tenant, `owner@${tenant}.test`, 'secret-password')
    t.same(await api(again.client, tenant, token).ids('time/projects', { $top: 1000 }), [...(acknowledged.get(tenant) ?? [])].sort(), `${tenant}: all there after a restart`)
  }
})

t.test('MAX_ACTIVE_TENANTS keeps the least recently used tenants at rest', async (t) => {
  const server = await startInProcess(tempDataDir('evict-cap'), { IDLE_EVICT_MS: '0', MAX_ACTIVE_TENANTS: '2' })
  t.teardown(() => server.stop())
  const { registry } = server.service.services
  const names = ['cap1', 'cap2', 'cap3', 'cap4']
  const apis: Api[] = []
  for (const name of names) {
    const tenantApi = api(server.client, name, (await server.client.createTenant(name)).token)
    await tenantApi.create('time/projects', { name: `${name} project` })
    apis.push(tenantApi)
  }
  await until(() => registry.activeCount <= 2, 'the cap holds')
  t.same([...registry.active()].map((actor) => actor.tenant).sort(), ['cap3', 'cap4'], 'the two used last stay')
  for (const [index, tenantApi] of apis.entries()) {
    const listed = await tenantApi.get('time/projects')
    t.same(
      listed.json.map((rec: { name: string }) => rec.name),
      [`${names[index]} project`],
    )
  }
  await until(() => registry.activeCount <= 2, 'the cap holds after touching every tenant')
  t.ok(registry.evictions >= 4, 'tenants went to rest to make room')
})

async function evictionsOf(server: ChildServer, dataDir: string): Promise<number> {
  const answer = await adminRequest(server.adminPort, 'GET', '/metrics', adminKeyOf(dataDir))
  return samplesOf(parseMetrics(answer.text), 'timeledger_tenant_evictions_total')[0]?.value ?? 0
}

async function untilEvicted(server: ChildServer, dataDir: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000
  while ((await evictionsOf(server, dataDir)) < count) {
    if (Date.now() > deadline) throw new Error(`no eviction number ${count}`)
    await sleep(50)
  }
}

t.test('kill -9 after evictions loses nothing', async (t) => {
  const dataDir = tempDataDir('evict-kill')
  const env = { IDLE_EVICT_MS: '200' }
  let server = await spawnServer(dataDir, env)
  const { token } = await server.client.createTenant('kill')
  let kill = api(server.client, 'kill', token)
  const before = await kill.create('time/projects', { name: 'before the eviction' })
  await untilEvicted(server, dataDir, 1)
  const after = await kill.create('time/projects', { name: 'after waking' })
  await killHard(server)

  server = await spawnServer(dataDir, env)
  kill = api(server.client, 'kill', token)
  t.same(await kill.ids('time/projects'), [before, after].sort(), 'both writes survive kill -9 right after waking')
  const third = await kill.create('time/projects', { name: 'third' })
  await untilEvicted(server, dataDir, 1)
  await killHard(server)

  server = await spawnServer(dataDir, env)
  t.teardown(() => killHard(server))
  kill = api(server.client, 'kill', token)
  t.same(await kill.ids('time/projects'), [before, after, third].sort(), 'all there after kill -9 of a server whose tenant rested')
  t.equal((await kill.get(`time/projects/${before}`)).json.name, 'before the eviction')
})

t.test('an eviction for MAX_ACTIVE_TENANTS that gives up (a request came meanwhile) is tried again', async (t) => {
  const server = await startInProcess(tempDataDir('evict-recheck'), { IDLE_EVICT_MS: '0', MAX_ACTIVE_TENANTS: '2' })
  t.teardown(() => server.stop())
  const { registry } = server.service.services
  await server.client.createTenant('busy1')
  const busy = registry.get('busy1')
  if (busy === undefined) throw new Error('busy1 is not there')
  await sleep(20)
  await server.client.createTenant('busy2')
  await sleep(20)
  // busy1, the least recently used, is held by an exclusive job; the eviction that busy3's activation asks for
  // queues behind it, and a read of busy1 queues behind that, so when the eviction runs somebody waits: it gives up.
  let release = () => {}
  const held = busy.exclusive(() => new Promise<void>((resolve) => (release = resolve)))
  await server.client.createTenant('busy3')
  t.equal(registry.activeCount, 3, 'over the cap while busy1 is held')
  const read = busy.read((state) => state.seq)
  release()
  await held
  await read
  await until(() => registry.activeCount <= 2, 'the cap holds again')
  t.ok(registry.evictions >= 1, 'another tenant went to rest')
})
