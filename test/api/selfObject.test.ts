/*
 * `users/@self` and `accounts/@own` name one object (issue 26): a GET answers
 * the object exactly as `users/{id}` and `accounts/{id}` do (JSON, XML,
 * no_expand), and the alias stands for the id on every path below it.
 */
import t from 'tap'
import { startInProcess } from '../helpers/server.js'
import { api, newUser } from '../helpers/api.js'
import { expectError } from '../helpers/identity.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const created = await client.createTenant('selfie')
const owner = api(client, 'selfie', created.token)
const sam = await newUser(client, 'selfie', owner, 'Sam')

t.test('users/@self answers the caller as users/{id} does', async (t) => {
  const self = await sam.api.get('users/@self')
  t.equal(self.status, 200)
  t.notOk(Array.isArray(self.json), 'an object, not a list')
  t.same(self.json, (await sam.api.get(`users/${sam.id}`)).json, 'the same answer as users/{id}')
  t.same((await sam.api.get('users/@self', { no_expand: true })).json, (await sam.api.get(`users/${sam.id}`, { no_expand: true })).json, 'no_expand too')
  const xml = await sam.api.get('users/@self', { format: 'xml' })
  t.equal(xml.status, 200)
  t.equal(xml.text, (await sam.api.get(`users/${sam.id}`, { format: 'xml' })).text, 'and in XML')
  t.match(xml.text, /^<\?xml[^>]*>\s*<user>/, 'one user element at the root')
  t.equal((await owner.get('users/@self')).json.email, 'owner@selfie.test', 'each caller is themself')
})

t.test('accounts/@own answers the account object', async (t) => {
  const own = await sam.api.get('accounts/@own')
  t.equal(own.status, 200)
  t.notOk(Array.isArray(own.json), 'an object, not a list')
  t.match(own.json, { id: created.accountId, urlPrefix: 'selfie' })
  t.same(own.json, (await sam.api.get(`accounts/${created.accountId}`)).json, 'the same answer as accounts/{id}')
  t.equal((await owner.get('accounts/@own', { format: 'xml' })).text, (await owner.get(`accounts/${created.accountId}`, { format: 'xml' })).text, 'and in XML')
})

t.test('the alias stands for the id below it and for writes', async (t) => {
  const before = (await sam.api.get('users/@self')).json
  const put = await sam.api.put('users/@self', { phone: '+420 1', version: before.version }, { response_object: true })
  t.equal(put.status, 200, put.text)
  t.match(put.json, { id: sam.id, phone: '+420 1', version: before.version + 1 })
  const set = await sam.api.post('users/@self/$set', undefined, { lastName: 'Selfish' })
  t.match(set.json, { id: sam.id, lastName: 'Selfish' })
  const projectId = await owner.create('time/projects', { name: 'Mine', owner: { id: sam.id } })
  t.same(await sam.api.ids('users/@self/projects'), [projectId], 'an inner collection of the caller')
  expectError(t, await sam.api.put('users/@self', { admin: true, version: set.json.version }), 403, 'TL01-1008', 'the rules of users/{id} apply')
  expectError(t, await owner.del('users/@self'), 403, 'TL01-1008', "the owner's user is not deleted through the alias either")
  const account = (await owner.get('accounts/@own')).json
  const renamed = await owner.put('accounts/@own', { name: 'Selfie Inc', version: account.version }, { response_object: true })
  t.match(renamed.json, { id: created.accountId, name: 'Selfie Inc' })
  expectError(t, await sam.api.put('accounts/@own', { name: 'Mine', version: renamed.json.version }), 403, 'TL01-1008', 'a plain user does not change the account')
})

t.test('an alias of another resource is no alias', async (t) => {
  expectError(t, await owner.get('time/projects/@self'), 404, 'TL01-9003', 'projects have no @self')
  expectError(t, await owner.get('users/@own'), 404, 'TL01-9003', 'users have no @own')
})
