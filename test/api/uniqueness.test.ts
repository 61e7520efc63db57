/*
 * Declared uniqueness and the rules on what clients may create: e-mails
 * are kept in lower case and unique in a tenant (and set once), a user is a
 * member of a project or department once, the account cannot be created or
 * deleted through the generic endpoints, and secret keys are seen only by
 * their user.
 */
import t from 'tap'
import { startInProcess } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const { token } = await client.createTenant('uniq')
const q = (query: Record<string, string | boolean> = {}) => ({ tenant: 'uniq', query: { token, ...query } })
const post = (path: string, body: unknown) => client.request('POST', `/v1/${path}`, { ...q({ response_object: true }), body })

t.test('e-mails', async (t) => {
  const created = await post('users', { firstName: 'Mixed', lastName: 'Case', email: 'Mixed.Case@Uniq.Test', password: 'mixed-password' })
  t.equal(created.status, 201)
  t.equal(created.json.email, 'mixed.case@uniq.test')
  const token2 = await client.login('uniq', 'MIXED.case@uniq.test', 'mixed-password')
  t.type(token2, 'string', 'login is case-insensitive')
  const duplicate = await post('users', { firstName: 'Again', email: 'mixed.case@UNIQ.test', password: 'other-password' })
  t.equal(duplicate.status, 412)
  t.match(duplicate.json.constraintViolation, { field: 'email', constraint: 'Unique' })
  const changed = await client.request('PUT', `/v1/users/${created.json.id}`, { ...q({ version_ignore: true, response_object: true }), body: { email: 'new@uniq.test', phone: '1' } })
  t.equal(changed.json.email, 'mixed.case@uniq.test', 'the e-mail is set once')
  t.equal(changed.json.phone, '1')
  const set = await client.request('POST', `/v1/users/${created.json.id}/$set`, q({ email: 'x@uniq.test' }))
  t.equal(set.status, 400)
})

t.test('memberships are unique', async (t) => {
  const me = (await client.request('GET', '/v1/users/@self', q())).json.id
  const project = (await post('time/projects', { name: 'P' })).json.id
  t.equal((await post(`time/projects/${project}/members`, { user: { id: me } })).status, 201)
  const twice = await post(`time/projects/${project}/members`, { user: { id: me } })
  t.equal(twice.status, 412)
  t.equal(twice.json.constraintViolation.constraint, 'Unique')
  const department = (await post('departments', { name: 'D' })).json.id
  t.equal((await post(`departments/${department}/members`, { user: { id: me } })).status, 201)
  t.equal((await post(`departments/${department}/members`, { user: { id: me } })).status, 412)
})

t.test('the account is made by sign-up only', async (t) => {
  const created = await post('accounts', { name: 'Second' })
  t.equal(created.status, 400)
  t.equal(created.json.code, 'TL01-1103')
  const account = (await client.request('GET', '/v1/accounts/@own', q())).json
  const removed = await client.request('DELETE', `/v1/accounts/${account.id}`, q())
  t.equal(removed.status, 400)
})

t.test('secret keys are seen only by their user', async (t) => {
  const mine = await client.request('POST', '/v1/users/@self/secretkeys', { ...q(), body: { name: 'owner key' } })
  t.equal(mine.status, 201, mine.text)
  await post('users', { firstName: 'Plain', email: 'plain@uniq.test', password: 'plain-password' })
  const plainToken = await client.login('uniq', 'plain@uniq.test', 'plain-password')
  const seen = await client.request('GET', '/v1/secretkeys', { tenant: 'uniq', query: { token: plainToken } })
  t.same(seen.json, [], "another user's keys are not listed")
  const direct = await client.request('GET', `/v1/secretkeys/${mine.json.id}`, { tenant: 'uniq', query: { token: plainToken } })
  t.equal(direct.status, 404)
})
