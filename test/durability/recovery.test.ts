/*
 * Recovery under damage: a torn snapshot and a snapshot with a wrong
 * checksum are skipped for the one before (the log fills the gap); a damaged
 * log entry stops the recovery of its tenant with an error naming the tenant
 * and the sequence number, while other tenants start and serve. So does an
 * entry that decodes but cannot be applied. A closed tenant is remembered:
 * its later requests get the same 503 without a new recovery (counted by
 * /metrics) until an online restore reopens it. A skipped snapshot is said
 * on stderr (tenant, file, reason) and counted by /metrics, and the next
 * snapshot of the tenant sets it aside.
 */
import fs from 'node:fs'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { LOG_ENTRY_FORMAT } from '../../src/engine/logEntry.js'
import { encodeLogEntry } from '../../src/persist/codec.js'
import { EmbeddedStorage, LogCorruptError } from '../../src/persist/embeddedStorage.js'
import { DamagedEntryError, recoverTenant, snapshotBodyOf } from '../../src/tenants/recovery.js'
import { listSnapshots } from '../../src/persist/snapshotFile.js'
import { adminKeyOf, adminRequest } from '../helpers/admin.js'
import { parseMetrics, samplesOf } from '../helpers/prometheus.js'
import { startInProcess, tempDataDir, testEnv, type InProcessServer } from '../helpers/server.js'

async function buildTwoSnapshots(label: string): Promise<{ dataDir: string; token: string; names: string[] }> {
  const dataDir = tempDataDir(label)
  let server = await startInProcess(dataDir)
  const { token } = await server.client.createTenant('acme')
  const names: string[] = []
  for (let round = 0; round < 2; round += 1) {
    for (let index = 0; index < 10; index += 1) {
      const name = `round${round}-${index}`
      await server.client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, body: { name } })
      names.push(name)
    }
    await server.stop()
    server = await startInProcess(dataDir)
  }
  await server.stop()
  return { dataDir, token, names }
}

function recover(dataDir: string) {
  const config = loadConfig(testEnv(dataDir))
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  try {
    return recoverTenant('acme', store)
  } finally {
    void store.close()
  }
}

t.test('a torn newest snapshot is skipped for the previous one', async (t) => {
  const { dataDir, names } = await buildTwoSnapshots('torn')
  const intact = recover(dataDir)
  const snapshots = listSnapshots(dataDir, 'acme')
  t.ok(snapshots.length >= 2, 'two snapshots exist')
  const newest = snapshots[0]
  if (newest === undefined) throw new Error('no snapshot')
  const bytes = fs.readFileSync(newest.file)
  fs.writeFileSync(newest.file, bytes.subarray(0, Math.floor(Math.random() * (bytes.length - 1))))
  const recovered = recover(dataDir)
  t.equal(recovered.report.skippedSnapshots.length, 1, 'the torn file was skipped')
  t.not(recovered.report.snapshotFile, newest.file)
  t.same(snapshotBodyOf(recovered.state), snapshotBodyOf(intact.state), 'the older snapshot plus the log gives the same state')
  const server = await startInProcess(dataDir)
  t.teardown(() => server.stop())
  const token = await server.client.login('acme', 'owner@acme.test', 'secret-password')
  const list = await server.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token, $orderby: 'name' } })
  t.same(
    (list.json as { name: string }[]).map((project) => project.name),
    [...names].sort(),
  )
})

t.test('a snapshot with a wrong checksum is skipped', async (t) => {
  const { dataDir } = await buildTwoSnapshots('checksum')
  const intact = recover(dataDir)
  const newest = listSnapshots(dataDir, 'acme')[0]
  if (newest === undefined) throw new Error('no snapshot')
  const bytes = fs.readFileSync(newest.file)
  const position = bytes.length - 1 - Math.floor(Math.random() * 20)
  bytes[position] = (bytes[position] as number) ^ 0xff
  fs.writeFileSync(newest.file, bytes)
  const recovered = recover(dataDir)
  t.match(recovered.report.skippedSnapshots[0]?.reason, /checksum|body/)
  t.same(snapshotBodyOf(recovered.state), snapshotBodyOf(intact.state))
})

t.test('a skipped snapshot is reported on stderr and counted by /metrics; the next snapshot sets it aside and keeps a good one', async (t) => {
  const { dataDir } = await buildTwoSnapshots('reported')
  const [newest, older] = listSnapshots(dataDir, 'acme')
  if (newest === undefined || older === undefined) throw new Error('two snapshots are needed')
  const bytes = fs.readFileSync(newest.file)
  bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff
  fs.writeFileSync(newest.file, bytes)
  const lines: string[] = []
  const consoleError = console.error
  console.error = (...args: unknown[]) => lines.push(args.map(String).join(' '))
  t.teardown(() => (console.error = consoleError))
  const server = await startInProcess(dataDir, { SNAPSHOTS_KEPT: '2' })
  t.teardown(() => server.stop())
  const corruptCount = async () => {
    const answer = await adminRequest(server.service.adminPort, 'GET', '/metrics', adminKeyOf(server.dataDir))
    return samplesOf(parseMetrics(answer.text), 'timeledger_snapshots_corrupt_total')[0]?.value
  }
  t.equal(await corruptCount(), 0, 'nothing found before the tenant is loaded')
  const token = await server.client.login('acme', 'owner@acme.test', 'secret-password')
  const skipped = lines.filter((line) => line.includes(newest.file))
  t.equal(skipped.length, 1, 'one line names the file')
  t.match(skipped[0], /^tenant 'acme': corrupt snapshot \S+ skipped: .+$/, 'with the tenant and the reason')
  t.equal(await corruptCount(), 1, 'counted')

  const created = await server.client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, body: { name: 'after' } })
  t.equal(created.status, 201)
  const taken = await server.service.services.registry.get('acme')?.snapshot()
  t.same(
    listSnapshots(dataDir, 'acme').map((listing) => listing.seq),
    [taken?.seq, older.seq],
    'SNAPSHOTS_KEPT (2) counts good snapshots only: the corrupt one does not push the older good one out',
  )
  t.ok(fs.existsSync(`${newest.file}.corrupt`), 'the corrupt file is set aside for the operator')
  t.match(lines.filter((line) => line.includes(newest.file)).at(-1), /set aside: .+$/)
  t.equal(await corruptCount(), 1, 'the same file counts once')
})

t.test('a damaged log entry stops only its tenant, naming tenant and sequence', async (t) => {
  const dataDir = tempDataDir('damaged')
  let server = await startInProcess(dataDir)
  const acme = await server.client.createTenant('acme')
  const other = await server.client.createTenant('other')
  for (let index = 0; index < 5; index += 1) {
    await server.client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token: acme.token }, body: { name: `a${index}` } })
  }
  const config = loadConfig(testEnv(dataDir))
  // Stop without the clean-stop snapshot covering the entries: remove the snapshots afterwards.
  await server.stop()
  for (const listing of listSnapshots(dataDir, 'acme')) fs.rmSync(listing.file)
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  const damagedSeq = 4
  await store.putRawEntry('acme', damagedSeq, Buffer.from([0xc1, 0xff, 0x00, 0x13]))
  t.throws(() => recoverTenant('acme', store), LogCorruptError)
  try {
    recoverTenant('acme', store)
  } catch (error) {
    t.match((error as Error).message, new RegExp(`tenant 'acme': log entry ${damagedSeq}`))
  }
  await store.close()
  server = await startInProcess(dataDir)
  t.teardown(() => server.stop())
  const blocked = await server.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token: acme.token } })
  t.equal(blocked.status, 503)
  t.equal(blocked.json.code, 'TL01-9011')
  t.match(blocked.json.message, /acme.*log entry 4/)
  const fine = await server.client.request('GET', '/v1/time/projects/$count', { tenant: 'other', query: { token: other.token } })
  t.equal(fine.status, 200, 'the other tenant starts and serves')
})

/** A tenant 'acme' with five projects (entries up to the returned seq), and 'other'; the server is stopped. */
async function twoTenantsStopped(label: string): Promise<{ dataDir: string; acme: string; other: string; lastSeq: number }> {
  const dataDir = tempDataDir(label)
  const server = await startInProcess(dataDir)
  const acme = await server.client.createTenant('acme')
  const other = await server.client.createTenant('other')
  for (let index = 0; index < 5; index += 1) {
    await server.client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token: acme.token }, body: { name: `a${index}` } })
  }
  const lastSeq = server.service.services.registry.get('acme')?.state.seq ?? 0
  await server.stop()
  return { dataDir, acme: acme.token, other: other.token, lastSeq }
}

async function recoveryFailures(server: InProcessServer): Promise<{ failed: number; closed: number }> {
  const answer = await adminRequest(server.service.adminPort, 'GET', '/metrics', adminKeyOf(server.dataDir))
  const families = parseMetrics(answer.text)
  return {
    failed: samplesOf(families, 'timeledger_tenant_recovery_failures_total')[0]?.value ?? -1,
    closed: samplesOf(families, 'timeledger_tenants_closed')[0]?.value ?? -1,
  }
}

t.test('an entry that decodes but cannot be applied closes its tenant with 503 naming tenant and sequence', async (t) => {
  const { dataDir, acme, other, lastSeq } = await twoTenantsStopped('unappliable')
  const config = loadConfig(testEnv(dataDir))
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  // Well formed, but it deletes a project that never existed: the replay after the clean-stop snapshot meets it.
  const badSeq = lastSeq + 1
  await store.putRawEntry('acme', badSeq, encodeLogEntry({ v: LOG_ENTRY_FORMAT, at: Date.now(), ops: [{ op: 'del', type: 'Project', id: 'never-there' }] }))
  t.throws(() => recoverTenant('acme', store), DamagedEntryError)
  t.throws(() => recoverTenant('acme', store), { message: new RegExp(`tenant 'acme': log entry ${badSeq} cannot be applied \\(.*del of missing Project never-there`) })
  await store.close()
  const server = await startInProcess(dataDir)
  t.teardown(() => server.stop())
  const blocked = await server.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token: acme } })
  t.equal(blocked.status, 503, 'not a 500')
  t.equal(blocked.json.code, 'TL01-9011')
  t.match(blocked.json.message, new RegExp(`acme.*log entry ${badSeq} cannot be applied`))
  t.equal(blocked.headers['retry-after'], '60')
  const fine = await server.client.request('GET', '/v1/time/projects/$count', { tenant: 'other', query: { token: other } })
  t.equal(fine.status, 200, 'the other tenant serves')
})

t.test('a closed tenant answers 503 at once, without a second recovery, until a restore reopens it', async (t) => {
  const { dataDir, acme, lastSeq } = await twoTenantsStopped('remembered')
  for (const listing of listSnapshots(dataDir, 'acme')) fs.rmSync(listing.file)
  const config = loadConfig(testEnv(dataDir))
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  await store.putRawEntry('acme', lastSeq, Buffer.from([0xc1, 0xff, 0x00, 0x13]))
  await store.close()
  const server = await startInProcess(dataDir)
  t.teardown(() => server.stop())
  let token = acme
  const list = () => server.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token } })
  t.same(await recoveryFailures(server), { failed: 0, closed: 0 }, 'nothing tried yet')
  const first = await list()
  t.equal(first.status, 503)
  t.same(await recoveryFailures(server), { failed: 1, closed: 1 }, 'the first request tried and closed the tenant')
  const originalError = console.error
  const logged: string[] = []
  console.error = (...parts: unknown[]) => logged.push(parts.join(' '))
  const again = await Promise.all([list(), list(), list()]).finally(() => (console.error = originalError))
  for (const answer of again) {
    t.equal(answer.status, 503)
    t.equal(answer.json.message, first.json.message, 'the same answer, naming tenant and sequence')
  }
  t.same(await recoveryFailures(server), { failed: 1, closed: 1 }, 'no further recovery was attempted')
  t.same(logged, [], 'nor logged again')

  const restored = await adminRequest(server.service.adminPort, 'POST', '/tenants/acme/restore', adminKeyOf(dataDir), JSON.stringify({ toSeq: lastSeq - 1 }))
  t.equal(restored.status, 200, restored.status === 200 ? 'restored to the entry before the damaged one' : restored.text)
  t.same(await recoveryFailures(server), { failed: 1, closed: 0 }, 'the restore reopened it')
  token = await server.client.login('acme', 'owner@acme.test', 'secret-password') // a restore ends every session
  const reopened = await list()
  t.equal(reopened.status, 200, reopened.status === 200 ? 'open again' : reopened.text)
  t.same((reopened.json as { name: string }[]).map((project) => project.name).sort(), ['a0', 'a1', 'a2', 'a3'], 'as it was before the damaged entry')
})
