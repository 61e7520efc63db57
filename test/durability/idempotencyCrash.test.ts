/*
 * Idempotency-Key across a crash: the server is killed with SIGKILL after
 * a keyed create is durable and before its answer leaves
 * (helpers/killAfterKeptWrite.ts), so the client sees the connection fail
 * and cannot know whether it was stored. Its retry with the same key, on
 * the restarted server, answers the first answer (kept in the same log
 * entry as the write) and the tenant holds exactly one record.
 */
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { killHard, REPO_ROOT, spawnServer, tempDataDir } from '../helpers/server.js'

const dataDir = tempDataDir('idempotency-crash')
const KILL_AFTER_KEPT_WRITE = pathToFileURL(path.join(REPO_ROOT, 'dist', 'test', 'helpers', 'killAfterKeptWrite.js')).href
const TENANT = 'retry'

t.test('a retry after kill -9 between the durable write and the answer stores one record', async (t) => {
  const armed = await spawnServer(dataDir, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${KILL_AFTER_KEPT_WRITE}`.trim() })
  t.teardown(() => killHard(armed))
  const { token } = await armed.client.createTenant(TENANT)
  const me = (await armed.client.request('GET', '/v1/users/@self', { tenant: TENANT, query: { token } })).json.id as string
  const body = { user: { id: me }, duration: 3_600_000, start: '2026-11-27T09:00:00Z', description: 'retried once' }
  const create = (client: typeof armed.client) =>
    client.request('POST', '/v1/time/timerecords', { tenant: TENANT, query: { token }, body, headers: { 'Idempotency-Key': 'crash-retry-1' }, timeoutMs: 10_000 })
  const lost = await create(armed.client).then(
    (response) => `answered ${response.status}`,
    (error: Error) => `no answer: ${error.message}`,
  )
  t.match(lost, /^no answer/, 'the client heard nothing of the first request')
  await killHard(armed)
  t.equal(armed.child.signalCode, 'SIGKILL', 'the server died by SIGKILL')

  const restarted = await spawnServer(dataDir)
  t.teardown(() => killHard(restarted))
  const retry = await create(restarted.client)
  t.equal(retry.status, 201)
  t.equal(retry.headers['idempotent-replayed'], 'true', 'the first answer, kept with the write')
  const records = await restarted.client.request('GET', '/v1/time/timerecords', { tenant: TENANT, query: { token, $filter: "description eq 'retried once'" } })
  t.equal(records.json.length, 1, 'exactly one record')
  t.equal(records.json[0]?.id, retry.json.id, 'the one the replayed answer names')
})
