/*
 * `accounts/{id}/$setUrlPrefix` (issue 26) moves the tenant to its new
 * name: every record, file and session goes along, the old address is an
 * unknown tenant and free again, the registration calls follow, and all of
 * it holds after a restart. A taken or invalid name is refused before
 * anything moves.
 */
import t from 'tap'
import { startInProcess, tempDataDir } from '../helpers/server.js'
import { api, newUser } from '../helpers/api.js'
import { expectError } from '../helpers/identity.js'

const dataDir = tempDataDir('url-prefix')
let server = await startInProcess(dataDir)
t.teardown(() => server.stop())
const apikey = server.client.apiKey
const created = await server.client.createTenant('before', 'owner@before.test', 'owner-password')
const before = api(server.client, 'before', created.token)
const clerk = await newUser(server.client, 'before', before, 'Clerk')
await server.client.createTenant('taken')
const projectId = await before.create('time/projects', { name: 'Moving' })
const recordId = await before.create('time/timerecords', { user: { id: clerk.id }, project: { id: projectId }, duration: 60_000 })
const LOGO = Buffer.from('the logo bytes \u0000\u0001', 'utf8')
const uploaded = await server.client.request('POST', '/v1/accounts/@own/logo/upload', {
  tenant: 'before',
  query: { token: created.token, filename: 'logo.bin' },
  rawBody: LOGO,
  headers: { 'content-type': 'application/octet-stream' },
})
if (uploaded.status !== 201) throw new Error(uploaded.text)

const checkurl = async (url: string) => (await server.client.request('GET', '/v1/register/checkurl', { query: { apikey, url } })).json.exists

t.test('refused before anything moves', async (t) => {
  expectError(t, await clerk.api.post('accounts/@own/$setUrlPrefix', undefined, { urlPrefix: 'mine' }), 403, 'TL01-1008', 'a plain user')
  const invalid = await before.post('accounts/@own/$setUrlPrefix', undefined, { urlPrefix: 'no_underscores' })
  expectError(t, invalid, 412, 'TL01-1104', 'an invalid name')
  t.match(invalid.json.constraintViolation, { entityType: 'Account', field: 'urlPrefix', constraint: 'Pattern' })
  expectError(t, await before.post('accounts/@own/$setUrlPrefix', undefined, { urlPrefix: 'admin' }), 412, 'TL01-1104', 'a reserved name')
  expectError(t, await before.post('accounts/@own/$setUrlPrefix', undefined, { urlPrefix: '-edge' }), 412, 'TL01-1104', "'-' at an end")
  expectError(t, await before.post('accounts/@own/$setUrlPrefix', undefined, { urlPrefix: 'taken' }), 409, 'TL01-1102', 'a name another tenant has')
  expectError(t, await before.post('accounts/@own/$setUrlPrefix'), 400, 'TL01-1105', 'no prefix')
  expectError(t, await before.get('accounts/@own/$setUrlPrefix', { urlPrefix: 'elsewhere' }), 405, 'TL01-9004', 'GET')
  const batch = await server.client.request('POST', '/v1/batch', {
    tenant: 'before',
    query: { token: created.token },
    body: [{ id: 'move', method: 'POST', path: '/v1/accounts/@own/$setUrlPrefix?urlPrefix=elsewhere' }],
  })
  t.equal(batch.json[0].code, 400, 'not inside a batch')
  const versionBefore = (await before.get('accounts/@own')).json.version
  const same = await before.post('accounts/@own/$setUrlPrefix', undefined, { urlPrefix: 'before' })
  t.equal(same.status, 200, 'the same prefix: nothing to do')
  t.equal(same.json.version, versionBefore, 'unchanged')
  t.equal(await checkurl('before'), true)
  t.equal((await before.get(`time/projects/${projectId}`)).status, 200, 'the tenant is where it was')
})

t.test('the tenant moves whole', async (t) => {
  const account = (await before.get('accounts/@own')).json
  const moved = await before.call('PUT', `accounts/${account.id}/$setUrlPrefix`, { body: { urlPrefix: ' After ' } })
  t.equal(moved.status, 200, moved.text)
  t.match(moved.json, { id: account.id, urlPrefix: 'after', version: account.version + 1, displayName: 'before Ltd (after)' })
  expectError(t, await before.get('users/@self'), 401, 'TL01-1005', 'the old address is an unknown tenant')
  const after = api(server.client, 'after', created.token)
  t.equal((await after.get('users/@self')).json.email, 'owner@before.test', "the owner's token works at the new address")
  t.equal((await clerk.api.get('users/@self')).status, 401, "(the clerk's api still points to the old one)")
  t.equal((await server.client.request('GET', '/v1/users/@self', { tenant: 'after', query: { token: clerk.api.token } })).status, 200, "and so does the clerk's")
  t.equal((await after.get(`time/projects/${projectId}`)).json.name, 'Moving', 'records keep their ids')
  t.equal((await after.get(`time/timerecords/${recordId}`)).json.project.id, projectId)
  const logo = await server.client.request('GET', '/v1/accounts/@own/logo/download', { tenant: 'after', query: { token: created.token } })
  t.same(logo.body, LOGO, 'the uploaded file moved along')
  t.equal(await checkurl('after'), true, 'checkurl knows the new name')
  t.equal(await checkurl('before'), false, 'and not the old one')
  const found = await server.client.request('GET', '/v1/register/findurl', { query: { apikey, email: 'owner@before.test' } })
  t.match(found.json, { url: /\/\/after\./ }, 'findurl gives the new address')
  t.ok(await server.client.login('after', 'owner@before.test', 'owner-password'), 'login at the new address')
  t.equal((await after.post('time/projects', { name: 'After the move' })).status, 201, 'writes go on')
})

t.test('the old name is free again, and everything holds after a restart', async (t) => {
  const again = await server.client.createTenant('before', 'new-owner@before.test')
  t.equal((await api(server.client, 'before', again.token).get('time/projects')).json.length, 0, 'a new tenant at the old name starts empty')
  await server.stop()
  server = await startInProcess(dataDir)
  const token = await server.client.login('after', 'owner@before.test', 'owner-password')
  const after = api(server.client, 'after', token)
  t.same(
    (await after.get('time/projects', { $orderby: 'name' })).json.map((project: { name: string }) => project.name),
    ['After the move', 'Moving'],
  )
  t.equal((await after.get('accounts/@own')).json.urlPrefix, 'after')
  const logo = await server.client.request('GET', '/v1/accounts/@own/logo/download', { tenant: 'after', query: { token } })
  t.same(logo.body, LOGO, 'the file too')
  const newOwner = await server.client.login('before', 'new-owner@before.test', 'secret-password')
  t.equal((await api(server.client, 'before', newOwner).get('time/projects')).json.length, 0, 'the old name holds only the new tenant')
})
