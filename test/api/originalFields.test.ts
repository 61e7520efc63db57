/*
 * Fields of the original service that clients send and read back (issue
 * 26): declared, stored and answered with their types and access, listed
 * in $metadata; dateFormat and timeFormat take only the original's
 * patterns (412 naming the field otherwise); `created` is createdAt under
 * the original's name; priceAutoCalculation false keeps a hand-set price;
 * a secret key past its expiration no longer logs in.
 */
import t from 'tap'
import { api, ref } from '../helpers/api.js'
import { dateMs, expectError, loginRaw } from '../helpers/identity.js'
import { startInProcess, type InProcessServer } from '../helpers/server.js'

const server: InProcessServer = await startInProcess()
t.teardown(() => server.stop())
const owner = await server.client.createTenant('fields')
const ownerApi = api(server.client, 'fields', owner.token)
const self = (await ownerApi.get('users/@self')).json
const me = (Array.isArray(self) ? self[0] : self) as { id: string }

const fieldNames = async (path: string): Promise<Map<string, { type: string; access: string }>> => {
  const metadata = await ownerApi.get(`${path}/$metadata`)
  return new Map((metadata.json.fields as { name: string; type: string; access: string }[]).map((field) => [field.name, field]))
}

t.test('Account keeps its address, VAT and display fields', async (t) => {
  const account = (await ownerApi.get('accounts/@own')).json
  const own = Array.isArray(account) ? account[0] : account
  const values = {
    streetAddress: 'Main Street 1',
    additionalAddressInfo: 'Floor 2',
    zipCode: '1010',
    city: 'Vienna',
    state: 'W',
    paymentInfo: 'IBAN AT00',
    vatMode: 'NO_VAT',
    vatRate: 20,
    dateFormat: 'dd.MM.yyyy',
    timeFormat: 'h:mm a',
    workingTimeStart: '08:00',
    workingTimeEnd: '17:30',
  }
  const put = await ownerApi.put(`accounts/${own.id}`, values, { version_ignore: true })
  t.equal(put.status, 200, put.text)
  const after = (await ownerApi.get(`accounts/${own.id}`)).json
  t.match(after, values, 'every field is stored and answered')
  t.equal(dateMs(after.created), dateMs(after.createdAt), 'created is createdAt')
  const xml = await ownerApi.get(`accounts/${own.id}`, { format: 'xml' })
  t.match(xml.text, /<paymentInfo>IBAN AT00<\/paymentInfo>/, 'and in XML')
  const fields = await fieldNames('accounts')
  t.equal(fields.get('created')?.access, 'READ_ONLY')
  t.equal(fields.get('vatRate')?.type, 'Double')
  t.equal(fields.get('dateFormat')?.access, 'READ_WRITE')
})

t.test('dateFormat and timeFormat take only the original patterns', async (t) => {
  for (const dateFormat of ['dd.MM.yyyy', 'MM/dd/yyyy', 'dd/MM/yyyy', 'yyyy-MM-dd', 'yyyy.MM.dd', 'yyyy/MM/dd']) {
    const put = await ownerApi.put(`users/${me.id}`, { dateFormat }, { version_ignore: true })
    t.equal(put.status, 200, `${dateFormat}: ${put.text}`)
  }
  for (const timeFormat of ['HH:mm', 'K:mm a', 'h:mm a', 'hh:mm a']) {
    const put = await ownerApi.put(`users/${me.id}`, { timeFormat }, { version_ignore: true })
    t.equal(put.status, 200, `${timeFormat}: ${put.text}`)
  }
  for (const [field, value] of [
    ['dateFormat', 'dd-MM-yyyy'],
    ['dateFormat', 'ddXMMXyyyy'],
    ['timeFormat', 'HH:mm:ss'],
    ['workingTimeStart', '25:00'],
  ]) {
    const refused = await ownerApi.put(`users/${me.id}`, { [field as string]: value }, { version_ignore: true })
    expectError(t, refused, 412, 'TL01-1104', `${field} ${value}`)
    t.equal(refused.json.constraintViolation?.field, field, 'the violation names the field')
    t.equal(refused.json.constraintViolation?.constraint, 'Pattern')
  }
  const account = (await ownerApi.get('accounts/@own')).json
  const own = Array.isArray(account) ? account[0] : account
  expectError(t, await ownerApi.put(`accounts/${own.id}`, { dateFormat: 'yyyyMMdd' }, { version_ignore: true }), 412, 'TL01-1104', 'on the account too')
})

t.test('User keeps nickName and birthdayRemind; created and confirmedEmail are read-only', async (t) => {
  const put = await ownerApi.put(`users/${me.id}`, { nickName: 'Boss', birthdayRemind: true, workingTimeEnd: '18:00', created: '/Date(0)/', confirmedEmail: 'x@y.z' }, { version_ignore: true })
  t.equal(put.status, 200, put.text)
  const user = (await ownerApi.get(`users/${me.id}`)).json
  t.equal(user.nickName, 'Boss')
  t.equal(user.birthdayRemind, true)
  t.equal(user.workingTimeEnd, '18:00')
  t.equal(dateMs(user.created), dateMs(user.createdAt), 'created is not written')
  t.equal(user.confirmedEmail, user.email, "the confirmed owner's address")
  const fields = await fieldNames('users')
  t.equal(fields.get('confirmedEmail')?.access, 'READ_ONLY')
  t.equal(fields.get('birthdayRemind')?.type, 'Boolean')
  const filtered = await ownerApi.get('users', { $filter: "nickName eq 'Boss'" })
  t.equal(filtered.json.length, 1, 'filterable like every field')
})

t.test('Access created, Client consentTill', async (t) => {
  const access = await ownerApi.post('accesses', { user: ref(me.id), product: 'TIME' }, { response_object: true })
  t.equal(access.status, 201, access.text)
  t.equal(dateMs(access.json.created), dateMs(access.json.createdAt))
  const client = await ownerApi.post('time/clients', { name: 'ACME', consentTill: '2030-01-31T00:00:00Z' }, { response_object: true })
  t.equal(client.status, 201, client.text)
  t.equal(dateMs(client.json.consentTill), Date.UTC(2030, 0, 31))
  t.equal((await fieldNames('time/clients')).get('consentTill')?.type, 'Date')
})

t.test('Bill and BillItem fields', async (t) => {
  const bill = await ownerApi.post('billing/bills', {
    header: 'Dear client',
    footer: 'Thank you',
    vatText: 'reverse charge',
    groupAttributes: 'phase',
    vatDate: '2026-03-01T00:00:00Z',
    lastPaymentDate: '2026-04-01T00:00:00Z',
  })
  t.equal(bill.status, 201, bill.text)
  const stored = (await ownerApi.get(`billing/bills/${bill.json.id}`)).json
  t.match(stored, { header: 'Dear client', footer: 'Thank you', vatText: 'reverse charge', groupAttributes: 'phase' })
  t.equal(dateMs(stored.vatDate), Date.UTC(2026, 2, 1))
  t.equal(dateMs(stored.lastPaymentDate), Date.UTC(2026, 3, 1))
  const item = await ownerApi.post(`billing/bills/${bill.json.id}/items`, { docIndex: 1, quantity: 2, unitPrice: 10, attributes: 'phase 1' })
  t.equal(item.status, 201, item.text)
  t.equal((await ownerApi.get(`billing/bills/${bill.json.id}/items`)).json[0].attributes, 'phase 1')
  const first = await ownerApi.create(`billing/bills/${bill.json.id}/items`, { docIndex: 0, quantity: 1, unitPrice: 5 })
  const vat = await ownerApi.create(`billing/bills/${bill.json.id}/vats`, { vatRate: 20, vatPrice: 5 })
  const withChildren = (await ownerApi.get(`billing/bills/${bill.json.id}`)).json
  t.same(
    withChildren.items.map((row: { id: string }) => row.id),
    [first, item.json.id],
    'items shows the inner collection by docIndex',
  )
  t.equal(withChildren.items[1].attributes, 'phase 1', 'embedded in full')
  t.same(
    withChildren.vats.map((row: { id: string }) => row.id),
    [vat],
  )
  const ignored = await ownerApi.put(`billing/bills/${bill.json.id}`, { items: [], vats: [] }, { version_ignore: true })
  t.equal(ignored.status, 200, 'items and vats are read-only on the bill')
  t.equal((await ownerApi.del(`billing/billitems/${first}`)).status, 200, 'an item goes to the trash')
  t.same(
    (await ownerApi.get(`billing/bills/${bill.json.id}`)).json.items.map((row: { id: string }) => row.id),
    [item.json.id],
    'a trashed item is not listed',
  )
  const byItem = await ownerApi.get('billing/bills', { $filter: "items/attributes eq 'phase 1'" })
  t.same(
    byItem.json.map((row: { id: string }) => row.id),
    [bill.json.id],
    'bills filter by a field of their items',
  )
  const fields = await fieldNames('billing/bills')
  t.match(fields.get('items'), { type: 'BillItem', access: 'READ_ONLY', list: true })
})

t.test('TimeRecord priceAutoCalculation and recordType', async (t) => {
  const project = await ownerApi.create('time/projects', { name: 'Priced' })
  await ownerApi.create('billing/pricelists/time', { price: 100, project: ref(project) })
  const body = {
    user: ref(me.id),
    project: ref(project),
    billable: true,
    start: '2026-01-05T08:00:00Z',
    stop: '2026-01-05T09:00:00Z',
    duration: 3_600_000,
    price: 7,
    priceAutoCalculation: false,
    recordType: 'WORK',
  }
  const kept = await ownerApi.post('time/timerecords', body, { calculate_price: true, response_object: true })
  t.equal(kept.status, 201, kept.text)
  t.equal(kept.json.price, 7, 'no price list is applied')
  t.equal(kept.json.priceAutoCalculation, false)
  t.equal(kept.json.recordType, 'WORK')
  const calculated = await ownerApi.post('time/timerecords', { ...body, priceAutoCalculation: true }, { calculate_price: true, response_object: true })
  t.equal(calculated.json.price, 100, 'with priceAutoCalculation true the price list applies')
})

t.test('a secret key past its expiration no longer logs in', async (t) => {
  const lasting = await ownerApi.post('users/@self/secretkeys', { name: 'lasting', expiration: '2099-01-01T00:00:00Z' })
  t.equal(lasting.status, 201, lasting.text)
  t.equal(dateMs(lasting.json.expiration), Date.UTC(2099, 0, 1))
  t.equal((await loginRaw(server.client, 'fields', lasting.json.secretKey, '')).status, 200, 'before its expiration it logs in')
  const expired = await ownerApi.post('users/@self/secretkeys', { name: 'expired', expiration: '2020-01-01T00:00:00Z' })
  t.equal(expired.status, 201, expired.text)
  expectError(t, await loginRaw(server.client, 'fields', expired.json.secretKey, ''), 401, 'TL01-1001', 'expired at creation')
  const put = await ownerApi.put(`secretkeys/${lasting.json.id}`, { expiration: '2021-01-01T00:00:00Z' }, { version_ignore: true })
  t.equal(put.status, 200, put.text)
  expectError(t, await loginRaw(server.client, 'fields', lasting.json.secretKey, ''), 401, 'TL01-1001', 'expired by a change')
  const never = await ownerApi.post('users/@self/secretkeys', { name: 'never' })
  t.equal(never.json.expiration, null, 'no expiration: never expires')
  t.equal((await loginRaw(server.client, 'fields', never.json.secretKey, '')).status, 200)
})
