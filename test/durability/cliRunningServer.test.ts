/*
 * The operator commands that talk to the running server — restore while it
 * serves, status, metrics — find it through the lock of the data directory
 * (DATA_DIR/server.lock names its pid and ports), never through the
 * ADMIN_PORT of their own environment, and every error names the address
 * tried and where its port and key came from:
 *  - with ADMIN_PORT naming ANOTHER server's admin listener (another key),
 *    restore --to-seq still restores the server that holds DATA_DIR (it was
 *    sent to the other one, which answered a bare 401);
 *  - a wrong key, and a lock naming a port nothing listens on, fail with the
 *    address in the message;
 *  - status: running, pid, ports, tenants, memory, log; exit 0; not running
 *    after the stop (exit 1); starting while the lock names no admin port
 *    yet; metrics: the Prometheus text.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { parseLock, readLock } from '../../src/persist/dataDirLock.js'
import { runCli } from '../helpers/cli.js'
import { freePort } from '../helpers/freePort.js'
import { spawnServer, stopGracefully, tempDataDir } from '../helpers/server.js'

/** `text` as a regular expression matching itself. */
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

const OUR_KEY = 'our-admin-key-0123456789'
const OTHER_KEY = 'other-admin-key-0123456789'

/** A live process that is no server: a lock naming it looks held. */
function bystander(t: Test): number {
  const child = spawn('sleep', ['120'], { stdio: 'ignore' })
  t.teardown(() => child.kill('SIGKILL'))
  return child.pid as number
}

t.test('the lock is a JSON line; a bare pid (older versions) still reads', async (t) => {
  t.same(parseLock('4242\n'), { pid: 4242, startedAt: null, host: null, port: null, adminPort: null })
  t.same(parseLock('{"pid":7,"startedAt":1700000000000,"host":"127.0.0.1","port":8080,"adminPort":8081}\n'), {
    pid: 7,
    startedAt: 1_700_000_000_000,
    host: '127.0.0.1',
    port: 8080,
    adminPort: 8081,
  })
  for (const text of ['', 'garbage', '{"pid":-1}', '{"port":8080}', '[1]']) t.equal(parseLock(text), null, `'${text}' is no lock`)
})

t.test('restore, status and metrics reach the server that holds DATA_DIR, whatever ADMIN_PORT names', async (t) => {
  const otherAdminPort = await freePort()
  const other = await spawnServer(tempDataDir('other'), { ADMIN_PORT: String(otherAdminPort), ADMIN_KEY: OTHER_KEY })
  t.teardown(() => stopGracefully(other))
  const dataDir = tempDataDir('ours')
  const server = await spawnServer(dataDir, { ADMIN_KEY: OUR_KEY })
  const lock = readLock(dataDir)
  t.same(
    { pid: lock?.pid, port: lock?.port, adminPort: lock?.adminPort, host: lock?.host },
    { pid: server.child.pid, port: server.port, adminPort: server.adminPort, host: '127.0.0.1' },
    'the lock names the pid and both listeners',
  )
  t.ok(lock !== null && lock.startedAt !== null && Math.abs(Date.now() - lock.startedAt) < 600_000, 'and when the server started')

  const { token } = await server.client.createTenant('ops')
  await server.client.request('POST', '/v1/time/projects', { tenant: 'ops', query: { token }, body: { name: 'kept' } })
  const keptAt = /log ranges:\n {2}seq 1\.\.(\d+) /.exec((await runCli(dataDir, ['history', 'ops'])).stdout)?.[1]
  t.ok(keptAt !== undefined, `history names the last entry (${keptAt})`)
  await server.client.request('POST', '/v1/time/projects', { tenant: 'ops', query: { token }, body: { name: 'undone' } })

  // This environment's ADMIN_PORT is the other server's, and the key ours: the other one would answer 401.
  const misled = { ADMIN_PORT: String(otherAdminPort), ADMIN_KEY: OUR_KEY }
  const restored = await runCli(dataDir, ['restore', 'ops', '--to-seq', String(keptAt)], misled)
  t.equal(restored.code, 0, `restore succeeds (${restored.stderr.trim().split('\n').at(-1)})`)
  t.match(restored.stdout, new RegExp(`restoring online through its admin listener at http://127\\.0\\.0\\.1:${server.adminPort}\\n`))
  t.match(restored.stdout, new RegExp(`ops: restored \\d+ objects from seq ${keptAt}`))
  const again = await server.client.login('ops', 'owner@ops.test', 'secret-password') // a restore ends every session
  const listed = await server.client.request('GET', '/v1/time/projects', { tenant: 'ops', query: { token: again, no_expand: true } })
  t.same(
    (listed.json as { name: string }[]).map((project) => project.name),
    ['kept'],
    'the server holding DATA_DIR was restored',
  )

  const status = await runCli(dataDir, ['status'], misled)
  t.equal(status.code, 0, 'status exits 0 for a server up and ready')
  const lines = status.stdout.split('\n')
  t.equal(lines[0], 'running: ready')
  t.match(status.stdout, new RegExp(`\\n  pid +${server.child.pid}\\n`))
  t.match(status.stdout, new RegExp(`\\n  public +http://127\\.0\\.0\\.1:${server.port} +\\(tenants at http://<tenant>\\.localhost:${server.port}/v1\\)\\n`))
  t.match(status.stdout, new RegExp(`\\n  admin +http://127\\.0\\.0\\.1:${server.adminPort}\\n`))
  t.match(status.stdout, /\n {2}started +\d{4}-\d\d-\d\dT[\d:.]+Z {2}\(up \d+m \d+s\)\n/)
  t.match(status.stdout, /\n {2}tenants +1 in memory of 1\n/)
  t.match(status.stdout, /\n {2}memory +resident [\d.]+ MiB; heap [\d.]+ MiB used of [\d.]+ MiB\n/)
  t.match(status.stdout, /\n {2}log +\d+ entries; store [\d.]+ [KM]iB in use of [\d.]+ GiB \(LMDB_MAP_SIZE_BYTES\)/)

  const metrics = await runCli(dataDir, ['metrics'], misled)
  t.equal(metrics.code, 0)
  t.match(metrics.stdout, /^# HELP /)
  t.match(metrics.stdout, /\ntimeledger_tenants_in_memory 1\n/, "the server's own metrics")

  const wrongKey = await runCli(dataDir, ['restore', 'ops', '--to-seq', String(keptAt)], { ADMIN_KEY: 'not-the-key' })
  t.equal(wrongKey.code, 1)
  t.match(
    wrongKey.stderr,
    new RegExp(
      `the admin listener at http://127\\.0\\.0\\.1:${server.adminPort} answered 401 TL01-1001: .*` +
        `\\(port: the admin port the server with pid ${server.child.pid} wrote into .*server\\.lock; key: ADMIN_KEY of this environment\\)`,
    ),
    'a refused key names the address, where its port came from and which key was sent',
  )
  const noKeyFile = await runCli(dataDir, ['metrics'])
  t.equal(noKeyFile.code, 1)
  t.match(noKeyFile.stderr, new RegExp(`no admin key for the admin listener at http://127\\.0\\.0\\.1:${server.adminPort}: set ADMIN_KEY, or run as a user who can read ${escaped(dataDir)}/admin-key`))
  fs.writeFileSync(path.join(dataDir, 'admin-key'), 'a stale key\n', { mode: 0o600 })
  const metricsWrongKey = await runCli(dataDir, ['metrics'])
  t.equal(metricsWrongKey.code, 1)
  t.match(metricsWrongKey.stderr, new RegExp(`answered 401 TL01-1001: .*key: ${escaped(dataDir)}/admin-key\\)`), 'without ADMIN_KEY: the key file named')

  t.equal(await stopGracefully(server), 0)
  const stopped = await runCli(dataDir, ['status'])
  t.equal(stopped.code, 1, 'status exits 1 when no server runs')
  t.equal(stopped.stdout, `not running: no server holds ${dataDir}\n`)
  const noMetrics = await runCli(dataDir, ['metrics'])
  t.equal(noMetrics.code, 1)
  t.match(noMetrics.stderr, /no server holds /)
})

t.test('a lock naming a port nothing listens on: the error names that address; a lock without one yet: starting', async (t) => {
  const dataDir = tempDataDir('deaf')
  const pid = bystander(t)
  const port = await freePort()
  fs.writeFileSync(path.join(dataDir, 'server.lock'), `${JSON.stringify({ pid, startedAt: Date.now(), host: '127.0.0.1', port: 1, adminPort: port })}\n`)
  const restore = await runCli(dataDir, ['restore', 'ops', '--to-seq', '1'], { ADMIN_KEY: OUR_KEY })
  t.equal(restore.code, 1)
  t.match(restore.stderr, new RegExp(`cannot reach the admin listener at http://127\\.0\\.0\\.1:${port} \\(the admin port the server with pid ${pid} wrote into .*server\\.lock\\): .*ECONNREFUSED`))
  const status = await runCli(dataDir, ['status'], { ADMIN_KEY: OUR_KEY })
  t.equal(status.code, 1)
  t.match(status.stderr, new RegExp(`cannot reach the admin listener at http://127\\.0\\.0\\.1:${port} `))

  fs.writeFileSync(path.join(dataDir, 'server.lock'), `${JSON.stringify({ pid, startedAt: Date.now() })}\n`)
  const starting = await runCli(dataDir, ['status'])
  t.equal(starting.code, 1)
  t.equal(starting.stdout, `starting: the server (pid ${pid}) holds ${dataDir}; its admin listener is not up yet\n`)
  const restoreWhileStarting = await runCli(dataDir, ['restore', 'ops', '--to-seq', '1'])
  t.match(restoreWhileStarting.stderr, new RegExp(`the server \\(pid ${pid}\\) holding ${escaped(dataDir)} is starting: its admin listener is not up yet`))
})
