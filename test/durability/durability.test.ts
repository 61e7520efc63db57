/*
 * Determinism and the operator's snapshot/restore path:
 *  - replaying a tenant's whole log on an empty state gives exactly the
 *    state the server had (compared with the snapshot a clean stop wrote);
 *  - `snapshot` then `restore --from` through the CLI brings back the same
 *    objects, offline;
 *  - while a server holds the data directory, `restore` runs through that
 *    server's admin listener (how the CLI finds it, whatever ADMIN_PORT
 *    says: test/durability/cliRunningServer.test.ts).
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { EmbeddedStorage } from '../../src/persist/embeddedStorage.js'
import { recoverTenant, snapshotBodyOf } from '../../src/tenants/recovery.js'
import { listSnapshots } from '../../src/persist/snapshotFile.js'
import { freePort } from '../helpers/freePort.js'
import type { TestClient } from '../helpers/http.js'
import { REPO_ROOT, spawnServer, startInProcess, stopGracefully, tempDataDir, testEnv } from '../helpers/server.js'

const run = promisify(execFile)
const cliWith = (extra: Record<string, string>, dataDir: string, ...args: string[]) =>
  run(process.execPath, [path.join(REPO_ROOT, 'dist', 'src', 'cli.js'), ...args], { env: { ...process.env, ...testEnv(dataDir, extra) } })
const cli = (dataDir: string, ...args: string[]) => cliWith({}, dataDir, ...args)

t.test('replaying the log rebuilds the live state exactly', async (t) => {
  const server = await startInProcess(tempDataDir('replay'))
  const { client } = server
  const { token } = await client.createTenant('replay')
  const ids: string[] = []
  for (let index = 0; index < 60; index += 1) {
    const created = await client.request('POST', '/v1/time/projects', { tenant: 'replay', query: { token }, body: { name: `p${index}`, timeBudget: index } })
    ids.push(created.json.id)
  }
  for (const [index, id] of ids.entries()) {
    if (index % 3 === 0) await client.request('PUT', `/v1/time/projects/${id}`, { tenant: 'replay', query: { token, version_ignore: true }, body: { note: `n${index}` } })
    if (index % 7 === 0) await client.request('DELETE', `/v1/time/projects/${id}`, { tenant: 'replay', query: { token } })
    if (index % 11 === 0) await client.request('DELETE', `/v1/time/projects/${id}`, { tenant: 'replay', query: { token, hard: true } })
  }
  await server.stop()
  const config = loadConfig(testEnv(server.dataDir))
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  t.teardown(() => store.close())
  const fromSnapshot = recoverTenant('replay', store)
  t.ok(fromSnapshot.report.snapshotFile, 'a clean stop wrote a snapshot')
  for (const listing of listSnapshots(config.dataDir, 'replay')) fs.renameSync(listing.file, `${listing.file}.aside`)
  const fromLog = recoverTenant('replay', store)
  t.equal(fromLog.report.snapshotSeq, 0, 'the second recovery used no snapshot')
  t.equal(fromLog.state.seq, fromSnapshot.state.seq)
  t.same(snapshotBodyOf(fromLog.state), snapshotBodyOf(fromSnapshot.state), 'replayed state equals the live state')
  t.equal(fromLog.state.collection('Project').size, 60 - 6, 'hard deletes removed their projects')
})

const listNames = async (client: TestClient, token: string) => (await client.request('GET', '/v1/time/projects', { tenant: 'ops', query: { token, $orderby: 'name', no_expand: true } })).json

t.test('CLI snapshot → restore round trip, offline', async (t) => {
  const dataDir = tempDataDir('cli')
  let server = await spawnServer(dataDir)
  const { token } = await server.client.createTenant('ops')
  for (let index = 0; index < 5; index += 1) {
    await server.client.request('POST', '/v1/time/projects', { tenant: 'ops', query: { token }, body: { name: `kept ${index}` } })
  }
  t.equal(await stopGracefully(server), 0)

  const snapshotRun = await cli(dataDir, 'snapshot', 'ops')
  t.match(snapshotRun.stdout, /ops: snapshot at seq \d+/)
  const snapshotFile = listSnapshots(dataDir, 'ops')[0]?.file as string
  const saved = path.join(dataDir, 'saved.tlsnap')
  fs.copyFileSync(snapshotFile, saved)

  server = await spawnServer(dataDir)
  const before = await server.client.request('GET', '/v1/time/projects', { tenant: 'ops', query: { token, $orderby: 'name', no_expand: true } })
  await server.client.request('POST', '/v1/time/projects', { tenant: 'ops', query: { token }, body: { name: 'made after the snapshot' } })
  t.equal(await stopGracefully(server), 0)

  const restoreRun = await cli(dataDir, 'restore', 'ops', '--from', saved)
  t.match(restoreRun.stdout, /restored \d+ objects/)
  const tenants = await cli(dataDir, 'tenants')
  t.match(tenants.stdout, /ops\s+\d+/)

  server = await spawnServer(dataDir)
  const again = await server.client.login('ops', 'owner@ops.test', 'secret-password') // a restore ends every session
  const after = await server.client.request('GET', '/v1/time/projects', { tenant: 'ops', query: { token: again, $orderby: 'name', no_expand: true } })
  t.same(after.json, before.json, 'the restored tenant has exactly the snapshot objects')
  const help = await cli(dataDir, 'restore', '--help')
  t.match(help.stdout, /usage: timeledger restore <tenant> --from/)
  t.equal(await stopGracefully(server), 0)
})

t.test('with a server whose admin listener ADMIN_PORT names, restore runs through that server', async (t) => {
  const dataDir = tempDataDir('cli-online')
  const env = { ADMIN_PORT: String(await freePort()), ADMIN_KEY: 'durability-admin-key' }
  const server = await spawnServer(dataDir, env)
  t.teardown(() => stopGracefully(server))
  const { token } = await server.client.createTenant('ops')
  await server.client.request('POST', '/v1/time/projects', { tenant: 'ops', query: { token }, body: { name: 'kept' } })
  const keptAt = /log ranges:\n {2}seq 1\.\.(\d+) /.exec((await cliWith(env, dataDir, 'history', 'ops')).stdout)?.[1]
  await server.client.request('POST', '/v1/time/projects', { tenant: 'ops', query: { token }, body: { name: 'undone' } })
  const restored = await cliWith(env, dataDir, 'restore', 'ops', '--to-seq', String(keptAt))
  t.match(restored.stdout, /holds .*: restoring online through its admin listener/)
  t.match(restored.stdout, new RegExp(`ops: restored \\d+ objects from seq ${keptAt}`))
  const again = await server.client.login('ops', 'owner@ops.test', 'secret-password') // a restore ends every session
  const names = ((await listNames(server.client, again)) as { name: string }[]).map((project) => project.name)
  t.same(names, ['kept'], 'the running server serves the restored state at once, without a restart')
})
