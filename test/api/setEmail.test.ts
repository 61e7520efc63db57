/*
 * `users/{id}/$setEmail` (issue 26): the e-mail a PUT may not change is
 * changed here, under the rules of the field and of a change of the user
 * (one's own e-mail only with the current password, `currentPassword`);
 * the login and the cross-tenant e-mail index (checkemail, findurl) follow.
 */
import t from 'tap'
import { startInProcess } from '../helpers/server.js'
import { api, newUser } from '../helpers/api.js'
import { expectError, loginRaw } from '../helpers/identity.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const apikey = client.apiKey
const created = await client.createTenant('mailer')
const owner = api(client, 'mailer', created.token)
const nina = await newUser(client, 'mailer', owner, 'Nina')
const omar = await newUser(client, 'mailer', owner, 'Omar')
await client.createTenant('elsewhere', 'shared@elsewhere.test')

const exists = async (email: string) => (await client.request('GET', '/v1/register/checkemail', { query: { apikey, email } })).json.exists

t.test('a user changes their own e-mail: the login and the index follow', async (t) => {
  t.equal(await exists('nina@mailer.test'), true)
  expectError(t, await nina.api.post('users/@self/$setEmail', undefined, { email: 'nina.new@mailer.test' }), 403, 'TL01-1008', 'not without the current password')
  const changed = await nina.api.post('users/@self/$setEmail', { currentPassword: 'user-password' }, { email: '  Nina.New@Mailer.TEST ' })
  t.equal(changed.status, 200, changed.text)
  t.match(changed.json, { id: nina.id, email: 'nina.new@mailer.test', version: 2 })
  t.equal((await nina.api.get('users/@self')).status, 200, 'the session goes on')
  t.equal((await loginRaw(client, 'mailer', 'nina.new@mailer.test', 'user-password')).status, 200, 'the new address logs in')
  expectError(t, await loginRaw(client, 'mailer', 'nina@mailer.test', 'user-password'), 401, 'TL01-1001', 'the old one no longer')
  t.equal(await exists('nina.new@mailer.test'), true, 'checkemail knows the new address')
  t.equal(await exists('nina@mailer.test'), false, 'and forgets the old one')
  const found = await client.request('GET', '/v1/register/findurl', { query: { apikey, email: 'nina.new@mailer.test' } })
  t.match(found.json, { url: /mailer\./ }, 'findurl finds the tenant by the new address')
})

t.test('the owner changes a user by id, with the body form', async (t) => {
  const changed = await owner.call('PUT', `users/${omar.id}/$setEmail`, { body: { email: 'shared@elsewhere.test' } })
  t.equal(changed.status, 200, changed.text)
  t.equal(changed.json.email, 'shared@elsewhere.test', 'an address another tenant uses is fine (unique per tenant)')
  t.equal(await exists('shared@elsewhere.test'), true)
  const found = await client.request('GET', '/v1/register/findurl', { query: { apikey, email: 'shared@elsewhere.test' } })
  t.match(found.json, { url: /elsewhere\./ }, 'findurl answers the first tenant by name')
})

t.test('refusals', async (t) => {
  const taken = await owner.post(`users/${omar.id}/$setEmail`, undefined, { email: 'nina.new@mailer.test' })
  expectError(t, taken, 412, 'TL01-1104', 'an address another user of the tenant has')
  t.match(taken.json.constraintViolation, { field: 'email', constraint: 'Unique' })
  const bad = await owner.post(`users/${omar.id}/$setEmail`, undefined, { email: 'not-an-address' })
  expectError(t, bad, 412, 'TL01-1104', 'not an e-mail')
  t.match(bad.json.constraintViolation, { field: 'email', constraint: 'Email' })
  expectError(t, await owner.post(`users/${omar.id}/$setEmail`, undefined, { email: `${'x'.repeat(300)}@mailer.test` }), 412, 'TL01-1104', 'too long')
  expectError(t, await owner.post(`users/${omar.id}/$setEmail`), 400, 'TL01-1105', 'no address')
  expectError(t, await owner.call('POST', `users/${omar.id}/$setEmail`, { body: { email: 42 } }), 400, 'TL01-1105', 'not a string')
  expectError(t, await nina.api.post(`users/${omar.id}/$setEmail`, undefined, { email: 'mine@mailer.test' }), 403, 'TL01-1008', "another user's")
  expectError(t, await nina.api.post(`users/${created.accountId}/$setEmail`, undefined, { email: 'x@mailer.test' }), 404, 'TL01-1101', 'an unknown user')
  expectError(t, await owner.get(`users/${omar.id}/$setEmail`, { email: 'x@mailer.test' }), 405, 'TL01-9004', 'GET')
  expectError(t, await owner.post('users/$setEmail', undefined, { email: 'x@mailer.test' }), 404, 'TL01-9003', 'on the collection')
  const put = await owner.put(`users/${omar.id}`, { email: 'sneaky@mailer.test', version: (await owner.get(`users/${omar.id}`)).json.version })
  t.equal(put.status, 200)
  t.equal((await owner.get(`users/${omar.id}`)).json.email, 'shared@elsewhere.test', 'a PUT still leaves the e-mail alone')
  t.equal(await exists('x@mailer.test'), false, 'nothing refused reached the index')
})
