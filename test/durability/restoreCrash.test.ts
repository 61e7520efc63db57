/*
 * An online restore and a crash (kill -9), in a server in a child process.
 * The restored state's snapshot is written while the tenant serves and made
 * current by a rename when the state is swapped in (src/tenants/
 * installState.ts), so:
 *   - killed right after the restore answered (and after a write that was
 *     acknowledged after it), the restarted server has the restored state
 *     and that write;
 *   - killed at a random moment during the restore, it has either the state
 *     before the restore, whole, or the restored one, whole; never a mix;
 *   - a snapshot file left unplaced by a killed restore is not loaded, and
 *     is removed by the tenant's next pruning (here: the snapshot of the
 *     clean stop at the end).
 * Each round first writes a project the restore undoes. RESTORE_CRASH_ROUNDS
 * sets the rounds (8), half of each kind.
 */
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { adminRequest } from '../helpers/admin.js'
import { runCli } from '../helpers/cli.js'
import { freePort } from '../helpers/freePort.js'
import type { TestClient } from '../helpers/http.js'
import { killHard, spawnServer, stopGracefully, tempDataDir } from '../helpers/server.js'

const ROUNDS = Number(process.env.RESTORE_CRASH_ROUNDS ?? 8)
const ADMIN_KEY = 'test-admin-key'
const TENANT = 'acme'

async function names(client: TestClient, token: string): Promise<string[]> {
  const list = await client.request('GET', '/v1/time/projects', { tenant: TENANT, query: { token, $orderby: 'name', $top: 1000 } })
  if (list.status !== 200) throw new Error(`list failed: ${list.status} ${list.text}`)
  return (list.json as { name: string }[]).map((project) => project.name)
}

async function add(client: TestClient, token: string, name: string): Promise<void> {
  const created = await client.request('POST', '/v1/time/projects', { tenant: TENANT, query: { token }, body: { name } })
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`)
}

const dataDir = tempDataDir('restore-crash')
const env = { ADMIN_PORT: String(await freePort()), ADMIN_KEY, RATE_LIMIT_REQUESTS: '0' }
let server = await spawnServer(dataDir, env)
t.teardown(() => killHard(server))
const owner = await server.client.createTenant(TENANT)
await add(server.client, owner.token, 'kept')
const history = await runCli(dataDir, ['history', TENANT], env)
const point = Number(/log ranges:\n {2}seq 1\.\.(\d+) /.exec(history.stdout)?.[1])
const login = () => server.client.login(TENANT, owner.email, owner.password)
const restore = () => adminRequest(server.adminPort === 0 ? Number(env.ADMIN_PORT) : server.adminPort, 'POST', `/tenants/${TENANT}/restore`, ADMIN_KEY, JSON.stringify({ toSeq: point }))

t.ok(point > 0, `the restore point is seq ${point}, after 'kept'`)
let restoreMs = 100
let before = ['kept']
for (let round = 0; round < ROUNDS; round += 1) {
  const afterAnswer = round % 2 === 0
  t.test(afterAnswer ? `round ${round}: killed right after the restore answered` : `round ${round}: killed during the restore`, async (t) => {
    let token = await login()
    await add(server.client, token, `undone ${round}`)
    before = [...before, `undone ${round}`].sort()
    t.same(await names(server.client, token), before, 'the project the restore undoes is there')
    if (afterAnswer) {
      const answer = await restore()
      t.equal(answer.status, 200, answer.text)
      restoreMs = (JSON.parse(answer.text) as { durationMs: number }).durationMs
      token = await login() // a restore ends every session
      await add(server.client, token, `after ${round}`)
      await killHard(server)
      server = await spawnServer(dataDir, env)
      before = ['kept', `after ${round}`].sort()
      t.same(await names(server.client, await login()), before, 'the restored state and the write acknowledged after it')
    } else {
      const answer = restore().catch(() => null)
      await new Promise((resolve) => setTimeout(resolve, Math.random() * (restoreMs + 20)))
      await killHard(server)
      await answer
      server = await spawnServer(dataDir, env)
      const seen = await names(server.client, await login())
      t.ok(JSON.stringify(seen) === JSON.stringify(before) || JSON.stringify(seen) === JSON.stringify(['kept']), `the state before the restore or the restored one, whole: ${JSON.stringify(seen)}`)
      before = seen
    }
  })
}

t.test('a clean stop prunes what a killed restore left unplaced', async (t) => {
  await add(server.client, await login(), 'last')
  t.equal(await stopGracefully(server), 0)
  const left = fs.readdirSync(path.join(dataDir, 'snapshots', TENANT)).filter((name) => name.startsWith('unplaced-'))
  t.same(left, [], 'no unplaced snapshot file is left')
})
