/*
 * Online restore through the running server's admin listener. The operator
 * CLI, run against a data directory a server holds, asks that server: tenant
 * alpha is restored to the point between two writes while tenant beta is
 * under a steady load of reads and writes (beta sees no error) and alpha's
 * own requests wait for the swap (no error either). Afterwards alpha serves
 * the restored state and takes writes, and after kill -9 and a restart it
 * has the restored state plus the later writes. The CLI shows the progress
 * lines the server streams back. The endpoint itself refuses bad input
 * clearly.
 */
import fs from 'node:fs'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { EmbeddedStorage } from '../../src/persist/embeddedStorage.js'
import { listSnapshots } from '../../src/persist/snapshotFile.js'
import { adminRequest } from '../helpers/admin.js'
import { runCli } from '../helpers/cli.js'
import { freePort } from '../helpers/freePort.js'
import type { TestClient } from '../helpers/http.js'
import { killHard, spawnServer, startInProcess, tempDataDir, testEnv } from '../helpers/server.js'

const ADMIN_KEY = 'test-admin-key'

async function names(client: TestClient, tenant: string, token: string): Promise<string[]> {
  const list = await client.request('GET', '/v1/time/projects', { tenant, query: { token, $orderby: 'name', $top: 1000 } })
  if (list.status !== 200) throw new Error(`list failed: ${list.status} ${list.text}`)
  return (list.json as { name: string }[]).map((project) => project.name)
}

async function add(client: TestClient, tenant: string, token: string, name: string): Promise<void> {
  const created = await client.request('POST', '/v1/time/projects', { tenant, query: { token }, body: { name } })
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`)
}

/** Reads (and with `writing`, every second request a write) on one tenant until stopped; every answer that is not 200/201 is kept. */
function steadyLoad(client: TestClient, tenant: string, token: string, workers: number, writing: boolean) {
  let running = true
  const failures: string[] = []
  let requests = 0
  let written = 0
  const loops = Array.from({ length: workers }, async (_, worker) => {
    for (let round = 0; running; round += 1) {
      const write = writing && round % 2 === 1
      const answer = write
        ? await client.request('POST', '/v1/time/projects', { tenant, query: { token }, body: { name: `load ${worker}-${round}` } })
        : await client.request('GET', '/v1/time/projects/$count', { tenant, query: { token } })
      requests += 1
      if (answer.status === (write ? 201 : 200)) written += write ? 1 : 0
      else failures.push(`${answer.status} ${answer.text}`)
    }
  })
  return {
    async stop() {
      running = false
      await Promise.all(loops)
      return { failures, requests, written }
    },
  }
}

const dataDir = tempDataDir('online-restore')
const env = { ADMIN_PORT: String(await freePort()), ADMIN_KEY, RATE_LIMIT_REQUESTS: '0' }
let server = await spawnServer(dataDir, env)
t.teardown(() => killHard(server))
const alpha = await server.client.createTenant('alpha')
const beta = await server.client.createTenant('beta')
await add(server.client, 'alpha', alpha.token, 'first')
const history = await runCli(dataDir, ['history', 'alpha'], env)
const firstSeq = Number(/log ranges:\n {2}seq 1\.\.(\d+) /.exec(history.stdout)?.[1])
await add(server.client, 'alpha', alpha.token, 'second')

t.test('history reads while the server runs', async (t) => {
  t.equal(history.code, 0, history.stderr)
  t.ok(firstSeq > 0, `the log ends at seq ${firstSeq} after the first write`)
})

t.test('restore alpha online while beta is under load: no errors anywhere', async (t) => {
  const betaLoad = steadyLoad(server.client, 'beta', beta.token, 4, true)
  const alphaReads = steadyLoad(server.client, 'alpha', alpha.token, 1, false)
  await new Promise((resolve) => setTimeout(resolve, 300))
  const restored = await runCli(dataDir, ['restore', 'alpha', '--to-seq', String(firstSeq)], env)
  await new Promise((resolve) => setTimeout(resolve, 300))
  const betaResult = await betaLoad.stop()
  const alphaResult = await alphaReads.stop()
  t.equal(restored.code, 0, restored.stderr)
  t.match(restored.stdout, /holds .*: restoring online through its admin listener/)
  t.match(restored.stderr, /^restore alpha: rebuilding the state$/m, 'the progress the server streams shows on stderr as it comes')
  t.match(restored.stderr, /^replay alpha {2}\d+ log entries in /m)
  t.match(restored.stderr, /^swap alpha: /m)
  t.match(restored.stderr, /^snapshot alpha {2}\d+ records in /m)
  t.match(restored.stdout, new RegExp(`alpha: restored \\d+ objects from seq ${firstSeq}, written`))
  t.match(restored.stdout, /the tenant's requests waited \d+ ms for the swap/, 'the answer says how long the swap held the tenant')
  t.same(betaResult.failures, [], `beta: ${betaResult.requests} requests during the restore, none failed`)
  t.ok(betaResult.requests > 20, 'beta was busy throughout')
  // A restore ends every session: alpha's reads after the swap are refused as logged out, nothing else.
  const loggedOut = (failure: string) => failure.startsWith('401 ') && failure.includes('"TL01-1010"')
  t.same(
    alphaResult.failures.filter((failure) => !loggedOut(failure)),
    [],
    `alpha: ${alphaResult.requests} requests waited for the swap, none failed but as logged out`,
  )
  const betaCount = await server.client.request('GET', '/v1/time/projects/$count', { tenant: 'beta', query: { token: beta.token } })
  t.equal(betaCount.json, betaResult.written, 'every acknowledged write of beta is there')
})

t.test('alpha serves the restored state, continues its log and survives kill -9', async (t) => {
  alpha.token = await server.client.login('alpha', alpha.email, alpha.password) // the restore ended every session
  t.same(await names(server.client, 'alpha', alpha.token), ['first'], "'second' was written after the point")
  await add(server.client, 'alpha', alpha.token, 'after')
  t.same(await names(server.client, 'alpha', alpha.token), ['after', 'first'])
  await killHard(server)
  server = await spawnServer(dataDir, env)
  t.same(await names(server.client, 'alpha', alpha.token), ['after', 'first'], 'the restored state plus the later write')
  const afterHistory = await runCli(dataDir, ['history', 'alpha'], env)
  t.match(afterHistory.stdout, /reachable restore points.*\n {2}seq 1\.\.\d+ .*\n {2}seq \d+\.\.\d+ /, 'the old line and the new one are both reachable')
})

t.test('the admin endpoint refuses bad requests clearly', async (t) => {
  const port = Number(env.ADMIN_PORT)
  const path = '/tenants/alpha/restore'
  t.equal((await adminRequest(port, 'POST', path, null, '{"toSeq": 1}')).status, 401, 'no admin key')
  t.equal((await adminRequest(port, 'POST', path, 'wrong', '{"toSeq": 1}')).status, 401, 'wrong admin key')
  const notJson = await adminRequest(port, 'POST', path, ADMIN_KEY, 'to seq one')
  t.equal(notJson.status, 400)
  t.match(JSON.parse(notJson.text), { code: 'TL01-1105', message: /must be JSON/ })
  const badSeq = await adminRequest(port, 'POST', path, ADMIN_KEY, '{"toSeq": "one"}')
  t.equal(badSeq.status, 400, 'a sequence number that is not one is a 400, not a 500')
  t.match(JSON.parse(badSeq.text).message, /--to-seq needs a sequence number/)
  const outside = await adminRequest(port, 'POST', path, ADMIN_KEY, '{"toSeq": 99999}')
  t.equal(outside.status, 400)
  t.match(JSON.parse(outside.text).message, /seq 99999 cannot be restored; reachable: seq 1\.\./)
  const missingFile = await adminRequest(port, 'POST', path, ADMIN_KEY, '{"from": "/nonexistent/file.tlsnap"}')
  t.equal(missingFile.status, 400)
  const unknown = await adminRequest(port, 'POST', '/tenants/nobody/restore', ADMIN_KEY, '{"toSeq": 1}')
  t.equal(unknown.status, 404)
  t.match(JSON.parse(unknown.text).message, /no tenant 'nobody'/)
})

t.test('a tenant closed by a damaged log entry is restored online to the point before it', async (t) => {
  const damagedDir = tempDataDir('online-damaged')
  const extra = { ADMIN_KEY }
  let inProcess = await startInProcess(damagedDir, extra)
  const { token } = await inProcess.client.createTenant('acme')
  for (const name of ['one', 'two', 'three']) await add(inProcess.client, 'acme', token, name)
  const lastSeq = inProcess.service.services.registry.get('acme')?.state.seq ?? 0
  await inProcess.stop()
  for (const listing of listSnapshots(damagedDir, 'acme')) fs.rmSync(listing.file)
  const config = loadConfig(testEnv(damagedDir))
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  await store.putRawEntry('acme', lastSeq, Buffer.from([0xc1, 0xff]))
  await store.close()

  inProcess = await startInProcess(damagedDir, extra)
  t.teardown(() => inProcess.stop())
  const closed = await inProcess.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token } })
  t.equal(closed.status, 503, 'the damaged tenant is closed')
  const restored = await adminRequest(inProcess.service.adminPort, 'POST', '/tenants/acme/restore', ADMIN_KEY, JSON.stringify({ toSeq: lastSeq - 1 }))
  t.equal(restored.status, 200, restored.text)
  t.match(JSON.parse(restored.text), { tenant: 'acme', pointSeq: lastSeq - 1, seq: lastSeq + 1 })
  const again = await inProcess.client.login('acme', 'owner@acme.test', 'secret-password') // a restore ends every session
  t.same(await names(inProcess.client, 'acme', again), ['one', 'two'], 'open again, as it was before the damaged entry')
})
