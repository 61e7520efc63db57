/*
 * A restore ends every session of the tenant. Over HTTP, against an online
 * restore: a token valid before the restore gets 401 TL01-1010 after it, a
 * token logged out after the restore point and a refresh token used after
 * it do not come back, a pending password confirmation is gone, logging in
 * again works and the objects are those of the restore point. A restore
 * from a snapshot file that holds a token does not bring that token back
 * either. Other tenants keep their sessions.
 */
import t from 'tap'
import { listSnapshots } from '../../src/persist/snapshotFile.js'
import { adminRequest } from '../helpers/admin.js'
import type { TestClient } from '../helpers/http.js'
import { basic, expectError, loginRaw, refreshRaw, whoAmI } from '../helpers/identity.js'
import { requestConfirmationByMail } from '../helpers/mail.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'

const ADMIN_KEY = 'test-admin-key-sessions'
const server = await startInProcess(tempDataDir('restore-sessions'), { ADMIN_KEY, RATE_LIMIT_REQUESTS: '0' })
t.teardown(() => server.stop())
const { client, service } = server
const store = service.services.registry.store

async function names(tenant: string, token: string): Promise<string[]> {
  const list = await client.request('GET', '/v1/time/projects', { tenant, query: { token, $orderby: 'name' } })
  if (list.status !== 200) throw new Error(`list failed: ${list.status} ${list.text}`)
  return (list.json as { name: string }[]).map((project) => project.name)
}

async function add(tenant: string, token: string, name: string): Promise<void> {
  const created = await client.request('POST', '/v1/time/projects', { tenant, query: { token }, body: { name } })
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`)
}

async function restoreOnline(tenant: string, body: object): Promise<void> {
  const answer = await adminRequest(service.adminPort, 'POST', `/tenants/${tenant}/restore`, ADMIN_KEY, JSON.stringify(body))
  if (answer.status !== 200) throw new Error(`restore failed: ${answer.status} ${answer.text}`)
}

function publicConfirmation(c: TestClient, email: string): Promise<string> {
  return requestConfirmationByMail(c, server.dataDir, email)
}

const owner = await client.createTenant('restored', 'owner@restored.test', 'owner-password')
const bystander = await client.createTenant('bystander')

t.test('a point-in-time restore ends every session; logging in again works', async (t) => {
  await add('restored', owner.token, 'kept')
  const session = await loginRaw(client, 'restored', owner.email, owner.password)
  t.equal(session.status, 200)
  const { token, refreshToken } = session.json as { token: string; refreshToken: string }
  const confirmationId = await publicConfirmation(client, owner.email)
  const point = store.lastSeq('restored')

  await add('restored', owner.token, 'after the point')
  t.equal((await client.request('GET', '/v1/auth/logout', { tenant: 'restored', query: { token } })).status, 200, 'logged out after the point')
  t.equal((await whoAmI(client, 'restored', owner.token)).status, 200, 'the first token works before the restore')

  await restoreOnline('restored', { toSeq: point })

  expectError(t, await whoAmI(client, 'restored', owner.token), 401, 'TL01-1010', 'a token valid before the restore:')
  expectError(t, await whoAmI(client, 'restored', token), 401, 'TL01-1010', 'a token logged out after the point:')
  t.equal((await refreshRaw(client, 'restored', refreshToken)).status, 401, 'the refresh token of the restore point does not work')
  const confirm = await client.request('POST', `/v1/auth/confirm/${confirmationId}`, { query: { apikey: client.apiKey }, headers: basic('', 'taken-over-password') })
  expectError(t, confirm, 400, 'TL01-1006', 'a password confirmation pending at the point:')

  const again = await client.login('restored', owner.email, owner.password)
  t.same(await names('restored', again), ['kept'], 'logged in again: the objects of the restore point')
  t.equal((await whoAmI(client, 'bystander', bystander.token)).status, 200, 'another tenant keeps its sessions')
})

t.test('a restore from a snapshot file that holds a token does not bring it back', async (t) => {
  const token = await client.login('restored', owner.email, owner.password)
  await add('restored', token, 'in the snapshot')
  const actor = service.services.registry.get('restored')
  if (actor === undefined) throw new Error('no actor')
  const snapshot = await actor.snapshot()
  t.ok(
    listSnapshots(server.dataDir, 'restored').some((listing) => snapshot.file.endsWith(`${listing.seq}.tlsnap`)),
    'the snapshot file is listed',
  )

  await restoreOnline('restored', { from: snapshot.file })

  expectError(t, await whoAmI(client, 'restored', token), 401, 'TL01-1010', 'the token in the snapshot:')
  const again = await client.login('restored', owner.email, owner.password)
  t.same(await names('restored', again), ['in the snapshot', 'kept'])
})
