/*
 * Expenses and expense types (time/expenses, time/expenseTypes, issue 26):
 * an expense takes its type's unit price and billable flag unless it names
 * them, `total` is quantity × unitPrice in cents, users write their own
 * expenses (like time records), lists filter and sort by date, summaries
 * add them up, the trash takes them, and a receipt is uploaded and
 * downloaded like a signature (the expense names it in `receipt`), under
 * the expense's permissions and locks.
 */
import t from 'tap'
import { api, ref } from '../helpers/api.js'
import { dateMs, expectError } from '../helpers/identity.js'
import { startInProcess, type InProcessServer } from '../helpers/server.js'
import { addUser } from '../helpers/users.js'

const server: InProcessServer = await startInProcess()
t.teardown(() => server.stop())
const owner = await server.client.createTenant('spend')
const ownerApi = api(server.client, 'spend', owner.token)
const bob = await addUser(server, 'spend', owner.token, 'Bob')
const bobApi = api(server.client, 'spend', bob.token)
const carol = await addUser(server, 'spend', owner.token, 'Carol')
const carolApi = api(server.client, 'spend', carol.token)
const project = await ownerApi.create('time/projects', { name: 'Site visit' })
const travel = await ownerApi.create('time/expenseTypes', { name: 'Travel', unit: 'km', unitPrice: 0.42, billable: true })
const material = await ownerApi.create('time/expenseTypes', { name: 'Material', billable: false })

const expense = (day: string, extra: Record<string, unknown> = {}) => ({ date: `${day}T00:00:00Z`, project: ref(project), expenseType: ref(travel), ...extra })

t.test('expense types', async (t) => {
  expectError(t, await ownerApi.post('time/expenseTypes', { name: 'Travel' }), 412, 'TL01-1104', 'the name is unique')
  expectError(t, await bobApi.post('time/expenseTypes', { name: 'Food' }), 403, 'TL01-1008', 'users do not define types')
  const metadata = await ownerApi.get('time/expenseTypes/$metadata')
  t.equal(metadata.json.path, '/v1/time/expenseTypes')
})

t.test('an expense takes its type defaults and totals in cents', async (t) => {
  const created = await bobApi.post('time/expenses', expense('2026-04-01', { quantity: 123, note: 'to the client' }), { response_object: true })
  t.equal(created.status, 201, created.text)
  t.match(created.json, { unitPrice: 0.42, billable: true, total: 51.66, quantity: 123, note: 'to the client', billed: null, receipt: null })
  t.equal(created.json.user.id, bob.id, 'the caller is the user')
  t.equal(created.json.expenseType.name, 'Travel', 'the type is embedded')
  t.equal(created.json.displayName, 'Tester Bob')
  const own = await bobApi.post('time/expenses', expense('2026-04-02', { expenseType: ref(material), unitPrice: 19.99 }), { response_object: true })
  t.match(own.json, { unitPrice: 19.99, billable: false, quantity: 1, total: 19.99 }, 'a named price wins; quantity defaults to 1')
  expectError(t, await bobApi.post('time/expenses', { date: '2026-04-03T00:00:00Z', project: ref(project) }), 412, 'TL01-1104', 'the type is required')
  expectError(t, await bobApi.post('time/expenses', expense('2026-04-03', { quantity: -1 })), 412, 'TL01-1104', 'no negative quantity')
  expectError(t, await bobApi.post('time/expenses', expense('2026-02-30')), 412, 'TL01-1104', 'an impossible date')
  expectError(
    t,
    await bobApi.put(`time/expenses/${created.json.id}`, { total: 1 }, { version_ignore: true }).then(async (put) => {
      t.equal(put.status, 200, 'total is read-only: ignored')
      return bobApi.put(`time/expenses/${created.json.id}`, { user: ref(carol.id) }, { version_ignore: true })
    }),
    403,
    'TL01-1008',
    'an expense is not handed to another user',
  )
  expectError(t, await carolApi.put(`time/expenses/${created.json.id}`, { note: 'mine' }, { version_ignore: true }), 403, 'TL01-1008', "another user's expense")
})

t.test('lists, filters, summaries, XML and the trash', async (t) => {
  const april = await ownerApi.get('time/expenses', { $filter: "date ge datetime'2026-04-01T00:00:00' and date lt datetime'2026-05-01T00:00:00'", $orderby: 'date desc' })
  t.same(
    april.json.map((row: { date: string }) => dateMs(row.date)),
    [Date.UTC(2026, 3, 2), Date.UTC(2026, 3, 1)],
  )
  const billable = await ownerApi.get('time/expenses', { $filter: `billable eq true and expenseType/id eq '${travel}'` })
  t.equal(billable.json.length, 1)
  const unbilled = await ownerApi.get('time/expenses/$unbilled')
  t.same(
    unbilled.json.map((row: { total: number }) => row.total),
    [51.66],
    '$unbilled: the billable expense not billed yet',
  )
  const unbilledSummary = await ownerApi.get('time/expenses/$unbilledsummary')
  const sums = (unbilledSummary.json as { summaries: { value: string }[] }[])[0]?.summaries.map((entry) => entry.value)
  t.same(sums, ['1', '123', '51.66'], '$unbilledsummary: count, quantity and total')
  const summary = await ownerApi.get('time/expenses/summary', { summary: 'expenseType/name;count();sum(total)' })
  t.same(
    summary.json.map((entry: { key: string; summaries: { value: string }[] }) => [entry.key, entry.summaries[1]?.value]),
    [
      ['Material', '19.99'],
      ['Travel', '51.66'],
    ],
  )
  const xml = await ownerApi.get('time/expenses', { format: 'xml' })
  t.match(xml.text, /^<\?xml[^>]*><expenses><expense>.*<total>/, 'XML names the list and its items')
  const id = april.json[0].id as string
  const deleted = await bobApi.del(`time/expenses/${id}`)
  t.equal(deleted.status, 200, deleted.text)
  t.equal((await ownerApi.get(`trash/${deleted.json.trashItem.id}`)).json.deletedObjectType, 'Expense')
  t.equal((await ownerApi.get(`trash/${deleted.json.trashItem.id}/$restore`)).status, 200, 'restored')
})

t.test('a receipt is uploaded and downloaded like a signature', async (t) => {
  const id = await bobApi.create('time/expenses', expense('2026-04-10', { quantity: 10 }))
  const bytes = Buffer.from('%PDF-1.4 receipt\u0000bytes')
  const upload = (who: typeof bobApi, target = id) =>
    who.call('POST', `time/expenses/${target}/receipt/upload`, { rawBody: bytes as unknown as string, headers: { 'content-type': 'application/pdf' }, query: { filename: 'taxi.pdf' } })
  expectError(t, await upload(carolApi), 403, 'TL01-1008', "not on another user's expense")
  expectError(t, await upload(bobApi, '00000000-0000-4000-8000-000000000000'), 404, 'TL01-1101', 'no such expense')
  const uploaded = await upload(bobApi)
  t.equal(uploaded.status, 201, uploaded.text)
  const withReceipt = (await ownerApi.get(`time/expenses/${id}`)).json
  t.match(withReceipt.receipt, { fileName: 'taxi.pdf', contentType: 'application/pdf', contentSize: bytes.length }, 'the expense embeds it')
  t.notOk('fileKey' in withReceipt.receipt, "where the bytes are stays the server's")
  const metadata = await carolApi.get(`time/expenses/${id}/receipt`)
  t.match(metadata.json, { fileName: 'taxi.pdf' }, 'anyone who sees the expense reads it')
  const download = await carolApi.get(`time/expenses/${id}/receipt/download`)
  t.equal(download.status, 200)
  t.equal(download.headers['content-type'], 'application/pdf')
  t.same(download.body, bytes, 'byte for byte')
  await ownerApi.create('time/locks', { lockDate: '2026-04-15T00:00:00Z', user: ref(bob.id) })
  expectError(t, await bobApi.del(`time/expenses/${id}/receipt`), 412, 'TL01-1106', 'a locked expense keeps its receipt')
  t.equal((await ownerApi.del(`time/expenses/${id}/receipt`)).status, 200, 'an admin removes it')
  t.equal((await ownerApi.get(`time/expenses/${id}`)).json.receipt, null, 'the expense no longer names it')
  expectError(t, await bobApi.get(`time/expenses/${id}/receipt/download`), 404, 'TL01-1101', 'gone')
})
