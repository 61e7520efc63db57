/*
 * A full log store, for real (nothing injected): with LMDB_MAP_SIZE_BYTES at
 * 4 MiB, large writes fill the environment until writes answer 503
 * TL01-9011. A refused write leaves nothing in memory (a refused batch with
 * a transaction group leaves none of its items), reads keep working, the
 * tenant reclaims its log's space and writes resume without a restart; the
 * file on disk stays near the ceiling, and after a restart every
 * acknowledged write is there.
 */
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import type { TestResponse } from '../helpers/http.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'

const LIMIT_BYTES = 4 * 1024 * 1024
const NOTE = 'n'.repeat(48_000)
// The second fill follows the first reclaim within seconds: the least time between two reclaims is cut from 10 s.
const env = { LMDB_MAP_SIZE_BYTES: String(LIMIT_BYTES), RATE_LIMIT_REQUESTS: '0', RECLAIM_MIN_INTERVAL_MS: '1000' }
const dataDir = tempDataDir('diskfull')
let server = await startInProcess(dataDir, env)
t.teardown(() => server.stop())
const { token } = await server.client.createTenant('full')
const q = (query: Record<string, string | number | boolean> = {}) => ({ tenant: 'full', query: { token, ...query } })
const acknowledged = new Set<string>()

async function names(): Promise<Set<string>> {
  const list = await server.client.request('GET', '/v1/time/projects', q({ $top: 1000 }))
  if (list.status !== 200) throw new Error(`list: ${list.status} ${list.text}`)
  return new Set((list.json as { name: string }[]).map((project) => project.name))
}

async function postProject(name: string) {
  return server.client.request('POST', '/v1/time/projects', { ...q(), body: { name, note: NOTE } })
}

async function postGroup(prefix: string) {
  const items = ['a', 'b'].map((member) => ({
    id: member,
    method: 'POST',
    path: '/v1/time/projects',
    body: JSON.stringify({ name: `${prefix}-${member}`, note: NOTE }),
    transaction: 'group',
  }))
  return server.client.request('POST', '/v1/batch', { ...q(), body: items })
}

/** Writes until the store refuses one; the refused answer and what it tried to write. */
async function fillUntilRefused(label: string, batch: boolean): Promise<{ refused: TestResponse; tried: string[] }> {
  for (let index = 0; index < 1000; index += 1) {
    const name = `${label}-${index}`
    const response = batch ? await postGroup(name) : await postProject(name)
    const tried = batch ? [`${name}-a`, `${name}-b`] : [name]
    if (response.status === 503) return { refused: response, tried }
    if (response.status !== 201 && response.status !== 200) throw new Error(`${label}: ${response.status} ${response.text}`)
    for (const written of tried) acknowledged.add(written)
  }
  throw new Error(`${label}: the store never filled`)
}

/** Probes with one small write until it is accepted; the milliseconds it took. */
async function waitForWrites(label: string): Promise<number> {
  const started = Date.now()
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const name = `${label}-probe-${attempt}`
    const response = await server.client.request('POST', '/v1/time/projects', { ...q(), body: { name } })
    if (response.status === 201) {
      acknowledged.add(name)
      return Date.now() - started
    }
    if (response.status !== 503) throw new Error(`${label}: ${response.status} ${response.text}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`${label}: writes did not resume`)
}

for (const [label, batch] of [
  ['single', false],
  ['batch', true],
] as const) {
  t.test(`${label} writes: refused when full, nothing half-applied, resumed without a restart`, async (t) => {
    const { refused, tried } = await fillUntilRefused(label, batch)
    t.equal(refused.status, 503)
    t.equal(refused.json.code, 'TL01-9011')
    t.match(refused.json.message, /log store is full/)
    t.equal(refused.headers['retry-after'], '1')
    const stored = await names()
    t.ok(stored.size > 0, 'reads keep working')
    for (const name of tried) t.notOk(stored.has(name), `refused ${name} is not applied`)
    let missing = 0
    for (const name of acknowledged) if (!stored.has(name)) missing += 1
    t.equal(missing, 0, `every acknowledged write is there (${acknowledged.size})`)
    const waitedMs = await waitForWrites(label)
    t.ok(waitedMs < 10_000, `writes resumed after ${waitedMs} ms, without a restart`)
    t.ok(server.service.services.registry.store.space.measure() < LIMIT_BYTES, 'the store is below its ceiling again')
  })
}

t.test('the file stays near the ceiling, and a restart keeps every acknowledged write', async (t) => {
  const fileBytes = fs.statSync(path.join(dataDir, 'ledger.mdb')).size
  t.ok(fileBytes < 3 * LIMIT_BYTES, `ledger.mdb is ${fileBytes} bytes for a ${LIMIT_BYTES}-byte ceiling`)
  await server.stop()
  server = await startInProcess(dataDir, env)
  const stored = await names()
  let missing = 0
  for (const name of acknowledged) if (!stored.has(name)) missing += 1
  t.equal(missing, 0, `all ${acknowledged.size} acknowledged writes survive a restart`)
  t.equal(stored.size, acknowledged.size, 'and nothing else')
})
