/*
 * The licence paths of issue 26: users/{id}/accesses (inner collection),
 * accesses/product/{product}/$free, accesses/products/$allowed and their
 * per-user forms, and users/{id}/accesses/@exceeded.
 */
import t from 'tap'
import { startInProcess } from '../helpers/server.js'
import { api, newUser, ref } from '../helpers/api.js'
import { expectError } from '../helpers/identity.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const created = await client.createTenant('licences')
const owner = api(client, 'licences', created.token)
const ownerId = (await owner.get('users/@self')).json.id as string
const ada = await newUser(client, 'licences', owner, 'Ada')
const ben = await newUser(client, 'licences', owner, 'Ben')

t.test("users/{id}/accesses lists and adds a user's accesses", async (t) => {
  const added = await owner.post(`users/${ada.id}/accesses`, { product: 'TIME' })
  t.equal(added.status, 201, added.text)
  t.equal((await owner.get(`accesses/${added.json.id}`)).json.user.id, ada.id, 'the user comes from the path')
  await owner.create('accesses', { user: ref(ada.id), product: 'CORE' })
  await owner.create('accesses', { user: ref(ben.id), product: 'TIME' })
  await owner.create('accesses', { user: ref(ownerId), product: 'TIME' })
  const listed = await owner.get(`users/${ada.id}/accesses`, { $orderby: 'product' })
  t.same(
    listed.json.map((access: { product: string }) => access.product),
    ['CORE', 'TIME'],
    "only Ada's",
  )
  t.equal((await ada.api.get('users/@self/accesses/$count')).text, '2', '$count, through @self')
})

t.test('without a licence limit every product is allowed to whoever holds it', async (t) => {
  t.same((await ada.api.get('accesses/products/$allowed')).json, { products: ['CORE', 'TIME'] }, "the caller's products")
  t.same((await ada.api.get(`users/${ben.id}/accesses/products/$allowed`)).json, { products: ['TIME'] }, "another user's")
  t.same((await owner.get('accesses/product/TIME/$free')).json, { product: 'TIME', licenseLimit: null, used: 3, free: null }, 'no cap: free is null')
  t.same((await owner.get('accesses/product/billing/$free')).json, { product: 'BILLING', licenseLimit: null, used: 0, free: null }, 'the product in any case')
})

t.test('with a limit: seats, exceeded accesses and what they no longer allow', async (t) => {
  const account = (await owner.get('accounts/@own')).json
  t.equal((await owner.put('accounts/@own', { licenseLimit: 2, version: account.version })).status, 200)
  t.same((await owner.get('accesses/product/TIME/$free')).json, { product: 'TIME', licenseLimit: 2, used: 3, free: 0 })
  t.same((await owner.get('accesses/product/CORE/$free')).json, { product: 'CORE', licenseLimit: 2, used: 1, free: 1 })
  t.same((await owner.get(`users/${ada.id}/accesses/product/TIME/$free`)).json, { product: 'TIME', licenseLimit: 2, used: 3, free: 0, granted: true }, 'Ada came first: she holds a seat')
  t.same((await owner.get(`users/${ownerId}/accesses/product/TIME/$free`)).json, { product: 'TIME', licenseLimit: 2, used: 3, free: 0, granted: false }, "the owner's came third: past the cap")
  t.same((await owner.get('accesses/products/$allowed')).json, { products: [] }, 'so the owner has no product')
  const exceeded = await owner.get(`users/${ownerId}/accesses/@exceeded`)
  t.equal(exceeded.status, 200, exceeded.text)
  t.same(
    exceeded.json.map((access: { product: string }) => access.product),
    ['TIME'],
  )
  t.same(
    (await owner.get('users/@self/accesses/@exceeded', { no_expand: true })).json[0].user,
    { id: ownerId, version: exceeded.json[0].user.version, displayName: 'Owner Olive', firstName: 'Olive', lastName: 'Owner' },
    'no_expand: a stub',
  )
  t.same(await owner.ids(`users/${ada.id}/accesses/@exceeded`), [], 'none of Ada')
  t.same(await owner.ids('accesses/@exceeded'), await owner.ids(`users/${ownerId}/accesses/@exceeded`), 'the same as the tenant-wide view')
  const xml = await owner.get('accesses/products/$allowed', { format: 'xml' })
  t.equal(xml.status, 200)
  t.match(xml.text, /<allowedProducts>/)
  t.match(
    (await ada.api.get('accesses/products/$allowed', { format: 'xml' })).text,
    /<products>CORE<\/products>\s*<products>TIME<\/products>|<product>CORE<\/product>\s*<product>TIME<\/product>/,
    'XML lists them',
  )
})

t.test('refusals', async (t) => {
  expectError(t, await owner.get('accesses/product/GOLD/$free'), 400, 'TL01-1105', 'an unknown product')
  expectError(t, await owner.get(`users/${ada.id}/accesses/product/GOLD/$free`), 400, 'TL01-1105', 'an unknown product of a user')
  expectError(t, await owner.get(`users/${created.accountId}/accesses/products/$allowed`), 404, 'TL01-1101', 'an unknown user')
  expectError(t, await owner.post('accesses/products/$allowed'), 405, 'TL01-9004', 'POST')
  expectError(t, await ada.api.post(`users/${ben.id}/accesses`, { product: 'BILLING' }), 403, 'TL01-1008', 'only the owner and admins add accesses')
  expectError(t, await client.request('GET', '/v1/accesses/products/$allowed', { tenant: 'licences' }), 400, 'TL01-1002', 'no token')
})
