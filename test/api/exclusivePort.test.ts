/*
 * A second service started on a PORT or ADMIN_PORT that a running one holds
 * (with a data directory of its own) refuses to start with a message naming
 * the port and the setting, gives back its data directory, and takes none of
 * the traffic: the first keeps answering every request on both listeners.
 * Before, both listeners bound with SO_REUSEPORT, the second start
 * succeeded, and the kernel shared the connections between the two.
 */
import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { adminRequest } from '../helpers/admin.js'
import { freePort } from '../helpers/freePort.js'
import { killHard, spawnServer, startInProcess, tempDataDir } from '../helpers/server.js'

const port = await freePort()
const adminPort = await freePort()
const first = await startInProcess(tempDataDir('first'), { PORT: String(port), ADMIN_PORT: String(adminPort) })
t.teardown(() => first.stop())
const { token } = await first.client.createTenant('acme')

/** The first service answers all of `count` requests on fresh connections, on both listeners. */
async function firstAnswersAll(t: Test, count: number): Promise<void> {
  let publicAnswers = 0
  let adminAnswers = 0
  for (let index = 0; index < count; index += 1) {
    // A tenant and token that exist only in the first service's data directory.
    if ((await first.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token } })).status === 200) publicAnswers += 1
    if ((await adminRequest(adminPort, 'GET', '/readyz', null)).status === 200) adminAnswers += 1
  }
  t.equal(publicAnswers, count, 'every public request reached the first service')
  t.equal(adminAnswers, count, 'every admin request reached the first service')
}

t.test('a second service on the same PORT refuses to start and says why', async (t) => {
  const dataDir = tempDataDir('second')
  await t.rejects(
    startInProcess(dataDir, { PORT: String(port), ADMIN_PORT: String(await freePort()) }),
    new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use .* set PORT to a free port`),
  )
  t.notOk(fs.existsSync(path.join(dataDir, 'server.lock')), 'its data directory lock is given back')
  const later = await startInProcess(dataDir)
  t.ok(later.service.port > 0, 'the data directory can be served afterwards')
  await later.stop()
  await firstAnswersAll(t, 30)
})

t.test('a second service on the same ADMIN_PORT refuses to start and says why', async (t) => {
  await t.rejects(
    startInProcess(tempDataDir('second-admin'), { PORT: String(await freePort()), ADMIN_PORT: String(adminPort) }),
    new RegExp(`cannot listen on 127\\.0\\.0\\.1:${adminPort}: the port is in use .* set ADMIN_PORT to a free port`),
  )
  await firstAnswersAll(t, 30)
})

t.test('serve (the CLI) exits with the message when its port is taken', async (t) => {
  const started = spawnServer(tempDataDir('second-cli'), { PORT: String(port), ADMIN_PORT: '0' })
  const outcome = await started.then(
    async (child) => {
      await killHard(child)
      return 'started'
    },
    (error: Error) => error.message,
  )
  t.match(outcome, /server exited with 1:/, 'it exits with status 1')
  t.match(outcome, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`), 'the message names the port')
  await firstAnswersAll(t, 10)
})
