/*
 * A snapshot names the tenant it was taken of. Restoring tenant beta from a
 * snapshot of acme would give beta acme's account, users and password
 * hashes (acme's owner could then log in at beta), so it is refused, online
 * (admin listener) and offline (CLI), with a message naming both tenants
 * and the flag that allows it: `--as beta` (`"as": "beta"` online), after
 * which the account takes beta's name. An export file given to restore is
 * refused naming `import`, and a snapshot given to import naming `restore`.
 */
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { exportTenant } from '../../src/tenants/tenantTransfer.js'
import { adminKeyOf, adminRequest } from '../helpers/admin.js'
import { runCli } from '../helpers/cli.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'

const dataDir = tempDataDir('cross')
let server = await startInProcess(dataDir)
await server.client.createTenant('acme', 'owner@acme.test', 'acme-password')
await server.client.createTenant('beta', 'owner@beta.test', 'beta-password')
const acmeActor = server.service.services.registry.get('acme')
if (acmeActor === undefined) throw new Error('acme is not active')
const files = tempDataDir('cross-files')
const acmeSnapshot = path.join(files, 'acme.tlsnap')
fs.copyFileSync((await acmeActor.snapshot()).file, acmeSnapshot)
const acmeExport = path.join(files, 'acme.tlexport')
await exportTenant('acme', dataDir, server.service.services.registry.store, acmeExport)

const loginStatus = async (tenant: string, email: string, password: string) =>
  (
    await server.client.request('GET', '/v1/auth/login', {
      tenant,
      query: { apikey: server.client.apiKey },
      headers: { authorization: `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}` },
    })
  ).status

const restoreOnline = (tenant: string, body: Record<string, unknown>) => adminRequest(server.service.adminPort, 'POST', `/tenants/${tenant}/restore`, adminKeyOf(dataDir), JSON.stringify(body))

t.test('online: a snapshot of another tenant is refused unless "as" names the tenant restored', async (t) => {
  const refused = await restoreOnline('beta', { from: acmeSnapshot })
  t.equal(refused.status, 400, refused.text)
  const { code, message } = JSON.parse(refused.text) as { code: string; message: string }
  t.equal(code, 'TL01-1105')
  t.match(message, /is a snapshot of tenant 'acme', not of 'beta'.*add --as beta/)
  const wrongAs = await restoreOnline('beta', { from: acmeSnapshot, as: 'gamma' })
  t.equal(wrongAs.status, 400)
  t.match(wrongAs.text, /--as names 'gamma', not the tenant restored/)
  t.equal(await loginStatus('beta', 'owner@acme.test', 'acme-password'), 401, "acme's owner cannot log in at beta")
  t.equal(await loginStatus('beta', 'owner@beta.test', 'beta-password'), 200, "beta's owner still can")

  const exportGiven = await restoreOnline('beta', { from: acmeExport })
  t.equal(exportGiven.status, 400)
  t.match(exportGiven.text, /is an export file \(of tenant 'acme'\), not a snapshot: 'import --from /)

  const own = await restoreOnline('acme', { from: acmeSnapshot })
  t.equal(own.status, 200, `a tenant's own snapshot restores as before: ${own.text}`)

  const forced = await restoreOnline('beta', { from: acmeSnapshot, as: 'beta' })
  t.equal(forced.status, 200, forced.text)
  t.match(JSON.parse(forced.text).restored, /of 'acme' as 'beta'/)
  const token = await server.client.login('beta', 'owner@acme.test', 'acme-password')
  const account = await server.client.request('GET', '/v1/accounts/@own', { tenant: 'beta', query: { token } })
  t.equal((account.json as { urlPrefix: string }).urlPrefix, 'beta', "asked for: the account takes beta's name")
})

t.test('offline: the CLI refuses the same way and names the command that takes each file', async (t) => {
  await server.stop()
  const refused = await runCli(dataDir, ['restore', 'acme', '--from', acmeExport])
  t.equal(refused.code, 1)
  t.match(refused.stderr, /is an export file \(of tenant 'acme'\), not a snapshot: 'import --from .*acme\.tlexport' takes it/)
  const crossed = await runCli(dataDir, ['restore', 'beta', '--from', acmeSnapshot])
  t.equal(crossed.code, 1)
  t.match(crossed.stderr, /is a snapshot of tenant 'acme', not of 'beta': restoring it would give 'beta' the account, users and passwords of 'acme'\. To do that on purpose, add --as beta/)
  const asWithSeq = await runCli(dataDir, ['restore', 'beta', '--to-seq', '1', '--as', 'beta'])
  t.equal(asWithSeq.code, 1)
  t.match(asWithSeq.stderr, /--as goes with --from <snapshot file> only/)
  const imported = await runCli(tempDataDir('cross-import'), ['import', '--from', acmeSnapshot])
  t.equal(imported.code, 1)
  t.match(imported.stderr, /acme\.tlsnap: a snapshot file \(of tenant 'acme'\), not an export file: 'restore <tenant> --from <file>' takes it/)
  const forced = await runCli(dataDir, ['restore', 'beta', '--from', acmeSnapshot, '--as', 'beta'])
  t.equal(forced.code, 0, forced.stderr)
  server = await startInProcess(dataDir)
  t.teardown(() => server.stop())
  t.equal(await loginStatus('beta', 'owner@acme.test', 'acme-password'), 200, 'asked for with --as')
})
