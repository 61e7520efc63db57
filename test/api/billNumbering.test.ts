/*
 * Bill numbering (issue 26): $getNextDocNumber and $getNextDocNumberPart
 * say the number the next bill gets; $setNextDocNumberPart moves it (owner
 * and admins, above every number a bill has), as one logged write that
 * survives a restart.
 */
import t from 'tap'
import { startInProcess, tempDataDir } from '../helpers/server.js'
import { api, newUser } from '../helpers/api.js'
import { expectError } from '../helpers/identity.js'

const dataDir = tempDataDir('bill-numbers')
let server = await startInProcess(dataDir)
t.teardown(() => server.stop())
const created = await server.client.createTenant('numbers')
let owner = api(server.client, 'numbers', created.token)
const clerk = await newUser(server.client, 'numbers', owner, 'Clerk')

const next = async () => (await owner.get('billing/bills/$getNextDocNumber')).json
const newBillNumber = async () => {
  const bill = await owner.post('billing/bills', { description: 'a bill' }, { response_object: true })
  if (bill.status !== 201) throw new Error(bill.text)
  return bill.json.docNumber as number
}

t.test('the next number is the one the next bill gets', async (t) => {
  t.same(await next(), { docNumber: 1, docNumberPart: 1 }, 'a new account starts at 1')
  t.same((await clerk.api.get('billing/bills/$getNextDocNumberPart')).json, { docNumber: 1, docNumberPart: 1 }, 'every user reads it')
  t.equal(await newBillNumber(), 1)
  t.equal(await newBillNumber(), 2)
  t.same(await next(), { docNumber: 3, docNumberPart: 3 })
  const xml = await owner.get('billing/bills/$getNextDocNumberPart', { format: 'xml' })
  t.match(xml.text, /<nextDocNumber>\s*<docNumber>3<\/docNumber>\s*<docNumberPart>3<\/docNumberPart>\s*<\/nextDocNumber>/, 'in XML')
})

t.test('$setNextDocNumberPart moves the counter', async (t) => {
  const set = await owner.post('billing/bills/$setNextDocNumberPart', undefined, { docNumberPart: 1000 })
  t.equal(set.status, 200, set.text)
  t.same(set.json, { docNumber: 1000, docNumberPart: 1000 })
  t.same(await next(), { docNumber: 1000, docNumberPart: 1000 })
  t.equal(await newBillNumber(), 1000, 'the next bill takes it')
  t.equal(await newBillNumber(), 1001, 'and the sequence goes on from there')
  const byBody = await owner.call('PUT', 'billing/bills/$setNextDocNumberPart', { body: { docNumberPart: 2000 } })
  t.same(byBody.json, { docNumber: 2000, docNumberPart: 2000 }, 'PUT with the part in the body')
})

t.test('refusals', async (t) => {
  expectError(t, await clerk.api.post('billing/bills/$setNextDocNumberPart', undefined, { docNumberPart: 5000 }), 403, 'TL01-1008', 'a plain user')
  const low = await owner.post('billing/bills/$setNextDocNumberPart', undefined, { docNumberPart: 1001 })
  expectError(t, low, 412, 'TL01-1104', 'a number a bill already has')
  t.match(low.json.constraintViolation, { entityType: 'Bill', field: 'docNumberPart' })
  t.match(low.json.message, /above 1001/, 'the message names the highest number')
  expectError(t, await owner.post('billing/bills/$setNextDocNumberPart', undefined, { docNumberPart: 0 }), 412, 'TL01-1104', 'zero')
  expectError(t, await owner.post('billing/bills/$setNextDocNumberPart', undefined, { docNumberPart: 10 ** 12 }), 412, 'TL01-1104', 'past the limit')
  expectError(t, await owner.post('billing/bills/$setNextDocNumberPart', undefined, { docNumberPart: 'soon' }), 400, 'TL01-1105', 'not a number')
  expectError(t, await owner.post('billing/bills/$setNextDocNumberPart'), 400, 'TL01-1105', 'no part')
  expectError(t, await owner.get('billing/bills/$setNextDocNumberPart', { docNumberPart: 3000 }), 405, 'TL01-9004', 'GET does not set')
  expectError(t, await owner.post('billing/bills/$getNextDocNumber'), 405, 'TL01-9004', 'POST does not read')
  const billId = (await owner.get('billing/bills', { $top: 1 })).json[0].id
  expectError(t, await owner.get(`billing/bills/${billId}/$getNextDocNumber`), 404, 'TL01-9003', 'on one bill')
  t.same(await next(), { docNumber: 2000, docNumberPart: 2000 }, 'nothing changed')
  // A bill in the trash keeps its number: the counter may not go back under it either.
  const trashed = await newBillNumber()
  const trashedId = (await owner.get('billing/bills', { $filter: `docNumber eq ${trashed}` })).json[0].id
  t.equal((await owner.del(`billing/bills/${trashedId}`)).status, 200)
  expectError(t, await owner.post('billing/bills/$setNextDocNumberPart', undefined, { docNumberPart: trashed }), 412, 'TL01-1104', 'the number of a bill in the trash')
})

t.test('the counter survives a restart', async (t) => {
  t.equal((await owner.post('billing/bills/$setNextDocNumberPart', undefined, { docNumberPart: 4242 })).status, 200)
  await server.stop()
  server = await startInProcess(dataDir)
  owner = api(server.client, 'numbers', await server.client.login('numbers', created.email, created.password))
  t.same(await next(), { docNumber: 4242, docNumberPart: 4242 }, 'read back after the restart')
  t.equal(await newBillNumber(), 4242, 'and given to the next bill')
})
