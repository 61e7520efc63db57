/*
 * The data directory is private: with the usual umask (022), a server that
 * creates a data directory, a tenant with a password and an uploaded file,
 * snapshots and an export leaves every folder 0700 and every file 0600
 * (the LMDB data file and its lock file, the snapshots, the admin key, the
 * lock file, the export). A data directory whose modes were looser (as an
 * older version left them) is tightened when the store opens.
 */
import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { loadConfig } from '../../src/config.js'
import { readLock } from '../../src/persist/dataDirLock.js'
import { EmbeddedStorage } from '../../src/persist/embeddedStorage.js'
import { exportTenant } from '../../src/tenants/tenantTransfer.js'
import { startInProcess, tempDataDir, testEnv } from '../helpers/server.js'

process.umask(0o022)

/** Every folder and file under `dir` (and `dir`), with its permission bits. */
function modes(dir: string): Map<string, { directory: boolean; mode: number }> {
  const found = new Map<string, { directory: boolean; mode: number }>()
  const visit = (entry: string) => {
    const stats = fs.lstatSync(entry)
    found.set(path.relative(dir, entry) || '.', { directory: stats.isDirectory(), mode: stats.mode & 0o777 })
    if (stats.isDirectory()) for (const name of fs.readdirSync(entry)) visit(path.join(entry, name))
  }
  visit(dir)
  return found
}

function checkPrivate(t: Test, dir: string): void {
  const found = modes(dir)
  for (const [entry, { directory, mode }] of found) t.equal(mode.toString(8), directory ? '700' : '600', `${entry} is ${directory ? 'a folder' : 'a file'} of mode ${mode.toString(8)}`)
}

const dataDir = path.join(tempDataDir('modes'), 'data')
const exportFile = path.join(tempDataDir('modes-export'), 'acme.tlexport')

t.test('a new data directory, its snapshots and an export are private', async (t) => {
  const server = await startInProcess(dataDir)
  const { token } = await server.client.createTenant('acme')
  const uploaded = await server.client.request('POST', '/v1/accounts/@own/logo/upload', {
    tenant: 'acme',
    query: { token, filename: 'logo.png' },
    rawBody: Buffer.from('not really a png'),
    headers: { 'content-type': 'image/png' },
  })
  t.equal(uploaded.status, 201)
  await server.stop()
  const config = loadConfig(testEnv(dataDir))
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  try {
    await exportTenant('acme', dataDir, store, exportFile)
  } finally {
    await store.close()
  }
  const found = modes(dataDir)
  for (const expected of ['.', 'ledger.mdb', 'ledger.mdb-lock', 'admin-key', 'snapshots', 'snapshots/acme']) t.ok(found.has(expected), `${expected} is there`)
  t.ok(
    [...found.keys()].some((entry) => entry.endsWith('.tlsnap')),
    'a snapshot was written',
  )
  checkPrivate(t, dataDir)
  t.equal((fs.statSync(exportFile).mode & 0o777).toString(8), '600', 'the export file is 0600')
})

t.test('a data directory with looser modes is tightened at start', async (t) => {
  for (const [entry, { directory }] of modes(dataDir)) fs.chmodSync(path.join(dataDir, entry), directory ? 0o755 : 0o644)
  fs.writeFileSync(path.join(dataDir, 'api-key'), 'an-old-key\n', { mode: 0o644 })
  const server = await startInProcess(dataDir)
  t.equal(readLock(dataDir)?.pid, process.pid, 'the server holds the lock')
  checkPrivate(t, dataDir)
  await server.stop()
})
