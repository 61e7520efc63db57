/*
 * Export and import through the operator CLI: a tenant with projects and an
 * uploaded logo is exported from one data directory and imported into a
 * second, as itself and under another name. The objects (compared as
 * snapshot bodies) and the file bytes are equal, and the imported tenants
 * serve logins, reads and the file over HTTP. An existing tenant is not
 * overwritten; damaged and newer-format files are refused with a reason.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { encodePlain } from '../../src/persist/codec.js'
import { decodeExport } from '../../src/persist/exportFile.js'
import { EmbeddedStorage } from '../../src/persist/embeddedStorage.js'
import { recoverTenant, snapshotBodyOf } from '../../src/tenants/recovery.js'
import type { SnapshotBody } from '../../src/persist/snapshotFile.js'
import { runCli } from '../helpers/cli.js'
import { startInProcess, tempDataDir, testEnv } from '../helpers/server.js'

const sourceDir = tempDataDir('export-from')
const targetDir = tempDataDir('export-to')
const exportFile = path.join(tempDataDir('export-file'), 'acme.tlexport')
const logo = crypto.randomBytes(3000)

let server = await startInProcess(sourceDir)
const { token, email, password } = await server.client.createTenant('acme')
for (const name of ['alpha', 'beta', 'gamma']) {
  const created = await server.client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, body: { name } })
  if (created.status !== 201) throw new Error(created.text)
}
const uploaded = await server.client.request('POST', '/v1/accounts/@own/logo/upload', {
  tenant: 'acme',
  query: { token, filename: 'logo.png' },
  rawBody: logo,
  headers: { 'content-type': 'image/png' },
})
if (uploaded.status !== 201) throw new Error(`upload failed: ${uploaded.status} ${uploaded.text}`)
await server.stop()

function stateOf(dataDir: string, tenant: string): { body: SnapshotBody; files: [string, Buffer][] } {
  const config = loadConfig(testEnv(dataDir))
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  try {
    const { state } = recoverTenant(tenant, store)
    const files: [string, Buffer][] = [...state.collection('FileMetadata').values()].map((rec) => {
      const key = rec.fileKey as string
      return [key, Buffer.from(store.files.get([tenant, key]) ?? Buffer.alloc(0))]
    })
    return { body: snapshotBodyOf(state), files }
  } finally {
    void store.close()
  }
}

const withoutUrlPrefix = (body: SnapshotBody): SnapshotBody => JSON.parse(JSON.stringify(body, (key, value: unknown) => (key === 'urlPrefix' ? undefined : value))) as SnapshotBody

t.test('export, then import into a second data directory: equal objects and files', async (t) => {
  const exported = await runCli(sourceDir, ['export', 'acme', '--out', exportFile])
  t.equal(exported.code, 0, exported.stderr)
  t.match(exported.stdout, /acme: exported seq \d+, \d+ objects and 1 files, \d+ bytes/)
  const imported = await runCli(targetDir, ['import', '--from', exportFile])
  t.equal(imported.code, 0, imported.stderr)
  t.match(imported.stdout, /acme: imported \d+ objects and 1 files as snapshot seq 1/)
  const renamed = await runCli(targetDir, ['import', '--from', exportFile, '--as', 'acme-copy'])
  t.equal(renamed.code, 0, renamed.stderr)
  t.match(renamed.stdout, /acme-copy \(exported as 'acme'\): imported/)

  const original = stateOf(sourceDir, 'acme')
  const copy = stateOf(targetDir, 'acme')
  t.same(copy.body, original.body, 'the same objects')
  t.same(copy.files, original.files, 'the same file bytes')
  t.ok(copy.files[0]?.[1].equals(logo), 'the logo, byte for byte')
  const other = stateOf(targetDir, 'acme-copy')
  t.same(withoutUrlPrefix(other.body), withoutUrlPrefix(original.body), 'under another name the records keep their ids')
  t.equal((other.body.collections.Account?.[0] as { urlPrefix: string } | undefined)?.urlPrefix, 'acme-copy', 'the account follows its new name')
  t.same(other.files, original.files)
})

t.test('the imported tenants serve logins, reads and files over HTTP', async (t) => {
  server = await startInProcess(targetDir)
  t.teardown(() => server.stop())
  for (const tenant of ['acme', 'acme-copy']) {
    const fresh = await server.client.login(tenant, email, password)
    const list = await server.client.request('GET', '/v1/time/projects', { tenant, query: { token: fresh, $orderby: 'name' } })
    t.same(
      (list.json as { name: string }[]).map((project) => project.name),
      ['alpha', 'beta', 'gamma'],
      tenant,
    )
    const download = await server.client.request('GET', '/v1/accounts/@own/logo/download', { tenant, query: { token: fresh } })
    t.equal(download.status, 200)
    t.ok(download.body.equals(logo), `${tenant}: the logo downloads byte for byte`)
  }
  const tokenBefore = await server.client.request('GET', '/v1/time/projects/$count', { tenant: 'acme', query: { token } })
  t.equal(tokenBefore.status, 200, 'a token issued before the export still works on the same name')
  const known = await server.client.request('GET', '/v1/register/checkemail', { query: { apikey: server.client.apiKey, email } })
  t.same(known.json, { exists: true }, 'the e-mail index knows the imported owner')
})

t.test('an existing tenant is not overwritten; a running server refuses imports', async (t) => {
  server = await startInProcess(targetDir)
  const again = await runCli(targetDir, ['import', '--from', exportFile, '--as', 'acme-third'])
  t.equal(again.code, 1)
  t.match(again.stderr, /cannot import: a server \(pid \d+\) holds/)
  await server.stop()
  const exists = await runCli(targetDir, ['import', '--from', exportFile])
  t.equal(exists.code, 1)
  t.match(exists.stderr, /tenant 'acme' exists in .*; import it under another name with --as <name>/)
  const badName = await runCli(targetDir, ['import', '--from', exportFile, '--as', 'Not_Valid'])
  t.match(badName.stderr, /'Not_Valid' is not a valid tenant name/)
})

t.test('damaged files and newer formats are refused with a reason', async (t) => {
  const bytes = fs.readFileSync(exportFile)
  const flipped = Buffer.from(bytes)
  flipped[flipped.length - 10] = (flipped[flipped.length - 10] as number) ^ 0xff
  t.throws(() => decodeExport(flipped), /checksum mismatch/)
  t.throws(() => decodeExport(bytes.subarray(0, bytes.length - 100)), /truncated file/)
  t.throws(() => decodeExport(Buffer.from('hello world, not an export')), /bad magic/)
  const header = encodePlain({ format: 99, tenant: 'acme' })
  const length = Buffer.alloc(4)
  length.writeUInt32BE(header.length)
  t.throws(() => decodeExport(Buffer.concat([Buffer.from('TLEXPORT'), length, header])), /export format 99 is newer than this program reads \(up to 1\)/)
  t.equal(decodeExport(bytes).format, 1)
})
