/*
 * Names from a request that become keys of the store (the tenant directory,
 * the global e-mail index) are bounded before they are looked up: an
 * e-mail by EMAIL_MAX_LENGTH (254), a tenant name — a Host label, a
 * `checkurl?url=` — by TENANT_NAME_MAX_LENGTH (63). Past the bound a query
 * parameter or a Host is a 400 TL01-1105, sign-up's owner e-mail a 412
 * TL01-1104 like any field that breaks its constraint; before, each of them
 * was an LMDB key over its size limit and answered 500. At the bound they
 * are looked up as before; the admin listener's tenant names are bounded
 * the same way (the tenant registry never asks the directory about a
 * longer name).
 */
import t from 'tap'
import { adminKeyOf, adminRequest } from '../helpers/admin.js'
import { expectError } from '../helpers/identity.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const apikey = client.apiKey
await client.createTenant('names')

/** An address of `length` characters. */
const emailOf = (length: number) => `${'a'.repeat(length - '@x.test'.length)}@x.test`
const longEmail = emailOf(2_000)

t.test('an e-mail longer than 254 characters: 400 on the calls that look it up', async (t) => {
  for (const [method, path] of [
    ['GET', '/v1/register/checkemail'],
    ['GET', '/v1/register/findurl'],
    ['POST', '/v1/users/requestconfirmation'],
  ] as const) {
    const answer = await client.request(method, path, { query: { apikey, email: longEmail } })
    expectError(t, answer, 400, 'TL01-1105', `${path}`)
    t.match(answer.json.message, /2000 characters; an e-mail address has at most 254/)
    const longest = await client.request(method, path, { query: { apikey, email: emailOf(254) } })
    t.ok(longest.status < 300, `${path}: 254 characters are looked up (${longest.status})`)
  }
})

t.test("sign-up with an owner's e-mail longer than 254 characters: 412 on the field", async (t) => {
  const answer = await client.request('POST', '/v1/register/signup', {
    query: { apikey },
    body: { account: { name: 'Long', urlPrefix: 'longmail' }, owner: { firstName: 'L', lastName: 'M', email: longEmail, password: 'correct-horse' } },
  })
  expectError(t, answer, 412, 'TL01-1104', 'the owner e-mail')
  t.match(answer.json.constraintViolation, { entityType: 'User', field: 'email', constraint: 'Email' })
  t.equal((await client.request('GET', '/v1/register/checkurl', { query: { apikey, url: 'longmail' } })).json.exists, false, 'no tenant was made')
})

t.test('a Host label longer than a tenant name: 400 on any tenant route, without credentials', async (t) => {
  for (const length of [64, 5_000]) {
    const tenant = 'b'.repeat(length)
    for (const path of ['/v1/users/@self', '/v1/auth/login', '/v1/time/projects']) {
      const answer = await client.request('GET', path, { tenant })
      expectError(t, answer, 400, 'TL01-1105', `a label of ${length} characters on ${path}`)
      t.match(answer.json.message, new RegExp(`tenant label has ${length} characters; a tenant's name has at most 63`))
    }
  }
  expectError(t, await client.request('GET', '/v1/users/@self', { tenant: 'c'.repeat(63) }), 401, 'TL01-1005', 'a label of 63 characters is an unknown tenant, as before')
})

t.test('checkurl with a URL prefix longer than a tenant name: 400', async (t) => {
  for (const length of [64, 20_000]) {
    const answer = await client.request('GET', '/v1/register/checkurl', { query: { apikey, url: 'u'.repeat(length) } })
    expectError(t, answer, 400, 'TL01-1105', `${length} characters`)
  }
  const longest = await client.request('GET', '/v1/register/checkurl', { query: { apikey, url: 'u'.repeat(63) } })
  t.equal(longest.status, 200)
  t.same(longest.json, { exists: false })
})

t.test("the admin listener's tenant names are bounded too", async (t) => {
  const answer = await adminRequest(server.service.adminPort, 'POST', `/tenants/${'d'.repeat(5_000)}/restore`, adminKeyOf(server.dataDir), JSON.stringify({ from: '/nowhere' }))
  t.ok(answer.status >= 400 && answer.status < 500, `a 4xx (${answer.status}: ${answer.text.slice(0, 120)})`)
})
