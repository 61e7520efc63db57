/*
 * Registration and the people of a tenant: the public check/find calls,
 * sign-up validation, users made by the owner (initial password, update,
 * deactivation and trash end their sessions), the account (`@own`, PUT),
 * and accesses per user and product.
 */
import t from 'tap'
import { startInProcess } from '../helpers/server.js'
import { expectError, loginRaw, whoAmI } from '../helpers/identity.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = await client.createTenant('people', 'owner@people.test', 'owner-password')
const apikey = client.apiKey

const signUp = (account: Record<string, unknown>, ownerFields: Record<string, unknown>) => client.request('POST', '/v1/register/signup', { query: { apikey }, body: { account, owner: ownerFields } })

t.test('checkurl, checkemail and findurl', async (t) => {
  const url = await client.request('GET', '/v1/register/checkurl', { query: { apikey, url: 'people' } })
  t.same(url.json, { exists: true })
  t.same((await client.request('GET', '/v1/register/checkurl', { query: { apikey, url: 'nobody-here' } })).json, { exists: false })
  t.same((await client.request('GET', '/v1/register/checkemail', { query: { apikey, email: 'OWNER@people.test' } })).json, { exists: true })
  t.same((await client.request('GET', '/v1/register/checkemail', { query: { apikey, email: 'nobody@people.test' } })).json, { exists: false })
  const found = await client.request('GET', '/v1/register/findurl', { query: { apikey, email: 'owner@people.test' } })
  t.match(found.json, { url: /^http:\/\/people\.localhost(?::\d+)?\/v1$/ })
  const notFound = await client.request('GET', '/v1/register/findurl', { query: { apikey, email: 'nobody@people.test' } })
  t.equal(notFound.status, found.status, 'an unknown e-mail: same status')
  t.same(Object.keys(notFound.json), Object.keys(found.json), 'and same shape')
  t.same(notFound.json, { url: null })
  expectError(t, await client.request('GET', '/v1/register/checkurl', { query: { url: 'people' } }), 401, 'TL01-1001', 'no API key')
  expectError(t, await client.request('GET', '/v1/register/checkurl', { query: { apikey } }), 400, 'TL01-1105', 'no url')
})

t.test('sign-up validation', async (t) => {
  const person = (email: string, password = 'long-enough') => ({ firstName: 'S', lastName: 'U', email, password })
  for (const urlPrefix of ['Bad Name', '-edge', 'edge-', 'dots.here', '', 'www']) {
    const answer = await signUp({ name: 'X', urlPrefix }, person(`x-${urlPrefix.length}@signup.test`))
    expectError(t, answer, 412, 'TL01-1104', `urlPrefix '${urlPrefix}'`)
    t.equal(answer.json?.constraintViolation?.field, 'urlPrefix')
  }
  expectError(t, await signUp({ name: 'X', urlPrefix: 'a'.repeat(64) }, person('long@signup.test')), 412, 'TL01-1104', 'urlPrefix of 64 characters')
  expectError(t, await signUp({ name: 'X', urlPrefix: 'people' }, person('taken-url@signup.test')), 409, 'TL01-1102', 'a taken urlPrefix')
  expectError(t, await signUp({ name: 'X', urlPrefix: 'fresh-one' }, person('OWNER@people.test')), 409, 'TL01-1102', 'a taken e-mail')
  const short = await signUp({ name: 'X', urlPrefix: 'fresh-two' }, person('short@signup.test', 'seven77'))
  expectError(t, short, 412, 'TL01-1104', 'a password of 7 characters')
  t.equal(short.json?.constraintViolation?.field, 'password')
  expectError(t, await signUp({ name: 'X', urlPrefix: 'fresh-three' }, { email: 'nopass@signup.test' }), 412, 'TL01-1104', 'no password')
  expectError(t, await signUp({ name: 'X', urlPrefix: 'fresh-four' }, person('not-an-email')), 412, 'TL01-1104', 'an invalid e-mail')
  expectError(t, await client.request('POST', '/v1/register/signup', { query: { apikey }, body: { account: {} } }), 400, 'TL01-1105', 'no owner')
  t.same((await client.request('GET', '/v1/register/checkurl', { query: { apikey, url: 'fresh-four' } })).json, { exists: false }, 'a refused sign-up leaves nothing')
  const good = await signUp({ name: 'Fresh', urlPrefix: 'Fresh-Five' }, person('good@signup.test', '12345678'))
  t.equal(good.status, 201, 'a valid sign-up (the address is lower-cased)')
  t.match(good.json, { id: /^[0-9a-f-]{36}$/ })
  expectError(t, await loginRaw(client, 'fresh-five', 'good@signup.test', '12345678'), 401, 'TL01-1007', 'not confirmed yet')
})

t.test('users made by the owner: initial password, update, deactivation, trash', async (t) => {
  const made = await client.request('POST', '/v1/users', {
    tenant: 'people',
    query: { token: owner.token, response_object: true },
    body: { firstName: 'Vic', lastName: 'Worker', email: 'vic@people.test', password: 'vic-password' },
  })
  t.equal(made.status, 201)
  t.notOk('password' in made.json, 'the password is never shown')
  t.match(made.json, { active: true, admin: false })
  const vicId = made.json.id as string
  const vic = await client.login('people', 'vic@people.test', 'vic-password')
  const vicOther = await client.login('people', 'vic@people.test', 'vic-password')

  expectError(
    t,
    await client.request('POST', '/v1/users', { tenant: 'people', query: { token: vic }, body: { email: 'x@people.test', password: 'xxxxxxxx' } }),
    403,
    'TL01-1008',
    'a plain user cannot make users',
  )
  expectError(
    t,
    await client.request('POST', '/v1/users', { tenant: 'people', query: { token: owner.token }, body: { email: 'y@people.test', password: 'short' } }),
    412,
    'TL01-1104',
    'an initial password under 8',
  )
  const renamed = await client.request('PUT', `/v1/users/${vicId}`, { tenant: 'people', query: { token: vic, response_object: true }, body: { phone: '123', version: made.json.version } })
  t.equal(renamed.status, 200, 'a user updates their own object')
  expectError(
    t,
    await client.request('PUT', `/v1/users/${vicId}`, { tenant: 'people', query: { token: vic }, body: { admin: true, version: renamed.json.version } }),
    403,
    'TL01-1008',
    'but not their own admin flag',
  )

  const off = await client.request('PUT', `/v1/users/${vicId}`, { tenant: 'people', query: { token: owner.token }, body: { active: false, version: renamed.json.version } })
  t.equal(off.status, 200, 'the owner deactivates the user')
  expectError(t, await whoAmI(client, 'people', vic), 401, 'TL01-1010', 'their token stops working')
  expectError(t, await loginRaw(client, 'people', 'vic@people.test', 'vic-password'), 401, 'TL01-1001', 'they cannot log in')
  const on = await client.request('PUT', `/v1/users/${vicId}`, { tenant: 'people', query: { token: owner.token }, body: { active: true, version: off.json.version } })
  t.equal(on.status, 200, 'reactivated')
  expectError(t, await whoAmI(client, 'people', vicOther), 401, 'TL01-1010', 'old tokens stay ended after reactivation')
  const fresh = await client.login('people', 'vic@people.test', 'vic-password')
  t.equal((await whoAmI(client, 'people', fresh)).status, 200, 'a new login works')

  t.equal((await client.request('DELETE', `/v1/users/${vicId}`, { tenant: 'people', query: { token: owner.token } })).status, 200, 'to the trash')
  expectError(t, await whoAmI(client, 'people', fresh), 401, 'TL01-1010', 'a trashed user’s token')
  expectError(t, await loginRaw(client, 'people', 'vic@people.test', 'vic-password'), 401, 'TL01-1001', 'a trashed user cannot log in')
})

t.test('every path that locks a user out ends their sessions: $set, hard delete', async (t) => {
  const make = async (email: string) => {
    const made = await client.request('POST', '/v1/users', { tenant: 'people', query: { token: owner.token }, body: { email, password: 'lock-password' } })
    return { id: made.json.id as string, token: await client.login('people', email, 'lock-password') }
  }
  const setOff = await make('set-off@people.test')
  t.equal((await client.request('POST', `/v1/users/${setOff.id}/$set`, { tenant: 'people', query: { token: owner.token, active: false } })).status, 200)
  expectError(t, await whoAmI(client, 'people', setOff.token), 401, 'TL01-1010', '$set active=false')
  const gone = await make('gone@people.test')
  t.equal((await client.request('DELETE', `/v1/users/${gone.id}`, { tenant: 'people', query: { token: owner.token, hard: true } })).status, 200)
  expectError(t, await whoAmI(client, 'people', gone.token), 401, 'TL01-1010', 'hard delete')
  const kept = await make('kept@people.test')
  t.equal((await client.request('POST', `/v1/users/${kept.id}/$set`, { tenant: 'people', query: { token: owner.token, phone: '42' } })).status, 200)
  t.equal((await whoAmI(client, 'people', kept.token)).status, 200, 'other changes leave the sessions alone')
})

t.test('the account: accounts/@own and PUT /accounts/{id}', async (t) => {
  const own = await client.request('GET', '/v1/accounts/@own', { tenant: 'people', query: { token: owner.token } })
  t.equal(own.status, 200)
  const account = own.json
  t.match(account, { id: owner.accountId, urlPrefix: 'people', name: 'people Ltd', confirmed: true })
  const put = await client.request('PUT', `/v1/accounts/${account.id}`, {
    tenant: 'people',
    query: { token: owner.token, response_object: true },
    body: { name: 'People Inc', currency: 'EUR', urlPrefix: 'hijack', version: account.version },
  })
  t.equal(put.status, 200)
  t.match(put.json, { name: 'People Inc', currency: 'EUR', urlPrefix: 'people', version: account.version + 1 })
  await client.request('POST', '/v1/users', { tenant: 'people', query: { token: owner.token }, body: { email: 'wes@people.test', password: 'wes-password' } })
  const wes = await client.login('people', 'wes@people.test', 'wes-password')
  t.equal((await client.request('GET', '/v1/accounts/@own', { tenant: 'people', query: { token: wes } })).status, 200, 'every user reads the account')
  expectError(
    t,
    await client.request('PUT', `/v1/accounts/${account.id}`, { tenant: 'people', query: { token: wes }, body: { name: 'Mine now', version: put.json.version } }),
    403,
    'TL01-1008',
    'only the owner and admins change it',
  )
})

t.test('accesses per user and product', async (t) => {
  const made = await client.request('POST', '/v1/users', { tenant: 'people', query: { token: owner.token }, body: { email: 'ada@people.test', password: 'ada-password' } })
  const adaId = made.json.id as string
  const time = await client.request('POST', '/v1/accesses', { tenant: 'people', query: { token: owner.token, response_object: true }, body: { user: { id: adaId }, product: 'TIME' } })
  t.equal(time.status, 201)
  t.match(time.json, { product: 'TIME', user: { id: adaId } })
  t.equal((await client.request('POST', '/v1/accesses', { tenant: 'people', query: { token: owner.token }, body: { user: { id: adaId }, product: 'BILLING' } })).status, 201)
  expectError(
    t,
    await client.request('POST', '/v1/accesses', { tenant: 'people', query: { token: owner.token }, body: { user: { id: adaId }, product: 'GAMES' } }),
    412,
    'TL01-1104',
    'an unknown product',
  )
  const list = await client.request('GET', '/v1/accesses', { tenant: 'people', query: { token: owner.token, $filter: `user/id eq '${adaId}'`, $orderby: 'product' } })
  t.equal(list.status, 200)
  t.same(
    list.json.map((access: { product: string }) => access.product),
    ['BILLING', 'TIME'],
  )
  const ada = await client.login('people', 'ada@people.test', 'ada-password')
  expectError(
    t,
    await client.request('POST', '/v1/accesses', { tenant: 'people', query: { token: ada }, body: { user: { id: adaId }, product: 'CORE' } }),
    403,
    'TL01-1008',
    'a plain user cannot grant accesses',
  )
})
