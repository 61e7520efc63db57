/*
 * A full store that the tenant's own log cannot free (another tenant's
 * uploaded file fills it): refused writes answer 503 TL01-9011 with
 * Retry-After, and the tenant reclaims its log once, not once per refused
 * write; it reclaims again only once it has logged something since and
 * RECLAIM_MIN_INTERVAL_MS has passed. Uploads count against
 * LMDB_MAP_SIZE_BYTES before they are accepted: one that does not fit now is
 * refused with 503 (nothing stored), one that could never fit with 413
 * TL01-1109.
 */
import t from 'tap'
import type { EmbeddedStorage } from '../../src/persist/embeddedStorage.js'
import type { TenantActor } from '../../src/tenants/tenantActor.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'

const LIMIT_BYTES = 4 * 1024 * 1024
const MiB = 1024 * 1024
const env = {
  LMDB_MAP_SIZE_BYTES: String(LIMIT_BYTES),
  RATE_LIMIT_REQUESTS: '0',
  RECLAIM_MIN_INTERVAL_MS: '1000',
  MAX_FILE_BYTES: String(LIMIT_BYTES + MiB),
}
const server = await startInProcess(tempDataDir('reclaim'), env)
t.teardown(() => server.stop())
const { store } = server.service.services.registry
const { token } = await server.client.createTenant('full')
const q = { tenant: 'full', query: { token } }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function post(name: string) {
  return server.client.request('POST', '/v1/time/projects', { ...q, body: { name } })
}

/** Counts the snapshots the tenant's actor takes from now on. */
function countSnapshots(actor: TenantActor): { count: number } {
  const counter = { count: 0 }
  const snapshot = actor.snapshot.bind(actor)
  actor.snapshot = (onProgress) => {
    counter.count += 1
    return snapshot(onProgress)
  }
  return counter
}

/** Another tenant's file of LIMIT_BYTES, counted at once (the store counts pages at most every 200 ms). */
async function fillWithOtherBytes(): Promise<void> {
  await store.files.put(['elsewhere', 'blob'], Buffer.alloc(LIMIT_BYTES))
  store.space.measure()
}

async function upload(path: string, bytes: number) {
  return server.client.request('POST', path, { ...q, query: { token, filename: 'f.bin' }, rawBody: Buffer.alloc(bytes, 7), headers: { 'content-type': 'application/octet-stream' } })
}

t.test('a refused write reclaims once; more refusals only answer 503', async (t) => {
  t.equal((await post('before')).status, 201)
  const actor = server.service.services.registry.get('full')
  if (actor === undefined) throw new Error('full is not active')
  const snapshots = countSnapshots(actor)
  await fillWithOtherBytes()
  for (let index = 0; index < 6; index += 1) {
    const refused = await post(`refused-${index}`)
    t.equal(refused.status, 503)
    t.equal(refused.json.code, 'TL01-9011')
    t.equal(refused.headers['retry-after'], '1')
    await sleep(20)
  }
  t.equal(snapshots.count, 1, 'six refused writes, one reclaim')
  await sleep(1100)
  t.equal((await post('still-refused')).status, 503)
  t.equal(snapshots.count, 1, 'past the interval but nothing logged since: a snapshot would free nothing')

  await store.files.remove(['elsewhere', 'blob'])
  let resumed = false
  for (let attempt = 0; attempt < 50 && !resumed; attempt += 1) {
    resumed = (await post(`resumed-${attempt}`)).status === 201
    if (!resumed) await sleep(50)
  }
  t.ok(resumed, 'writes resume once the space is free')
  await fillWithOtherBytes()
  t.equal((await post('refused-again')).status, 503)
  t.equal((await post('refused-again-2')).status, 503)
  await sleep(50)
  t.equal(snapshots.count, 2, 'logged since and past the interval: one more reclaim, for both refusals')
  await store.files.remove(['elsewhere', 'blob'])
  store.space.measure()
})

t.test('an upload counts against LMDB_MAP_SIZE_BYTES before it is accepted', async (t) => {
  t.equal((await upload('/v1/accounts/@own/logo/upload', 3 * MiB)).status, 201, 'a file that fits is stored')
  const refused = await upload('/v1/users/@self/signature/upload', 2 * MiB)
  t.equal(refused.status, 503, 'one that does not fit beside it now is refused')
  t.equal(refused.json.code, 'TL01-9011')
  t.equal(refused.headers['retry-after'], '1')
  t.equal((await server.client.request('GET', '/v1/users/@self/signature', q)).status, 404, 'no metadata was stored')
  t.same([...(store as EmbeddedStorage).files.getKeys({ start: ['full', 'signature'], end: ['full', 'signature~'] })], [], 'and no bytes')
  t.ok(store.space.measure() <= LIMIT_BYTES, 'the store stays under its ceiling')
  const never = await upload('/v1/users/@self/signature/upload', LIMIT_BYTES)
  t.equal(never.status, 413, 'a file the store could never hold')
  t.equal(never.json.code, 'TL01-1109')
  t.equal((await upload('/v1/users/@self/signature/upload', 100_000)).status, 201, 'a small one still fits')
})
