/*
 * Time record pricing: every price-list level and conflicts between levels;
 * what "billable" means (only true is billable: unset gets no price, and
 * reports agree); calculate_price on PUT; $updateprice keeping a price set
 * by hand; $calculateprice storing nothing; price lists whose combination
 * is no level refused on create and update.
 */
import t from 'tap'
import { strictCalls } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = await client.createTenant('price')
const token = owner.token
const q = (query: Record<string, string | number | boolean> = {}) => ({ tenant: 'price', query: { token, ...query } })
const HOUR = 3_600_000

const { post, get, put } = strictCalls(client, 'price', token)

const me = await get('users/@self')

t.test('each level, conflicts, not billable and priceModified', async (t) => {
  const user = me.id as string
  const workType = (await post('time/worktypes', { name: 'Design' })).id
  const customer = (await post('time/clients', { name: 'Price Client' })).id
  const project = (await post('time/projects', { name: 'Priced', client: { id: customer } })).id
  const task = (await post('time/tasks', { name: 'Task', project: { id: project } })).id
  const record = { user: { id: user }, workType: { id: workType }, project: { id: project }, task: { id: task }, duration: 90 * 60_000, billable: true }
  const price = async () => (await client.request('POST', '/v1/time/timerecords/$calculateprice', { ...q(), body: record })).json
  t.same(await price(), { price: null, unitPrice: null }, 'no price list: no price')
  const levels: [number, Record<string, unknown>][] = [
    [1, {}],
    [2, { workType: { id: workType } }],
    [3, { user: { id: user } }],
    [4, { user: { id: user }, workType: { id: workType } }],
    [5, { client: { id: customer } }],
    [6, { client: { id: customer }, workType: { id: workType } }],
    [7, { client: { id: customer }, user: { id: user } }],
    [8, { client: { id: customer }, user: { id: user }, workType: { id: workType } }],
    [9, { project: { id: project } }],
    [10, { project: { id: project }, client: { id: customer } }],
    [11, { project: { id: project }, workType: { id: workType } }],
    [12, { project: { id: project }, user: { id: user } }],
    [13, { project: { id: project }, user: { id: user }, workType: { id: workType } }],
    [14, { task: { id: task } }],
    [15, { task: { id: task }, project: { id: project } }],
    [16, { task: { id: task }, project: { id: project }, workType: { id: workType } }],
    [17, { task: { id: task }, project: { id: project }, user: { id: user } }],
    [18, { task: { id: task }, project: { id: project }, user: { id: user }, workType: { id: workType } }],
  ]
  // Lists are added from the highest level down: each new, lower one must not win.
  const created: string[] = []
  for (const [level, dimensions] of [...levels].reverse()) {
    created.push((await post('billing/pricelists/time', { price: level * 10, ...dimensions })).id)
    t.same(await price(), { price: 18 * 10 * 1.5, unitPrice: 180 }, `level 18 still wins over level ${level}`)
  }
  // Now remove them from the top: each time the next level down applies.
  for (const [index, [level]] of [...levels].reverse().entries()) {
    t.same(await price(), { price: level * 10 * 1.5, unitPrice: level * 10 }, `level ${level} applies`)
    await client.request('DELETE', `/v1/billing/pricelists/time/${created[index]}`, q())
  }
  t.same(await price(), { price: null, unitPrice: null })

  // A conflict between a user price and another user's higher-level price.
  await post('billing/pricelists/time', { price: 100, user: { id: user } })
  const other = await post('users', { firstName: 'Other', lastName: 'User', email: 'other@rep.test', password: 'other-password' })
  await post('billing/pricelists/time', { price: 999, user: { id: other.id }, workType: { id: workType } })
  t.same(await price(), { price: 150, unitPrice: 100 }, "another user's price list does not apply")

  const stored = await post('time/timerecords', { ...record, duration: 20 * 60_000 }, { calculate_price: true })
  t.equal(stored.price, 33.33, '100/h × 20 min rounded half away from zero')
  t.equal(stored.unitPrice, 100)
  const notBillable = await post('time/timerecords', { ...record, billable: false }, { calculate_price: true })
  t.equal(notBillable.price, null, 'not billable: no price')
  const manual = await post('time/timerecords', { ...record, price: 7, priceModified: true }, { calculate_price: true })
  t.equal(manual.price, 7, 'a price set by hand stays')
  const cheaper = await post('billing/pricelists/time', { price: 200, user: { id: user }, project: { id: project } })
  const updated = await client.request('PUT', `/v1/time/timerecords/${stored.id}/$updateprice`, q())
  t.match(updated.json, { price: 66.67, unitPrice: 200 })
  await client.request('DELETE', `/v1/billing/pricelists/time/${cheaper.id}`, q())
  const again = await client.request('PUT', `/v1/time/timerecords/${stored.id}/$updateprice`, q())
  t.equal(again.json.price, 33.33, 'a price list in the trash does not apply')
  const wrongPlace = await client.request('POST', '/v1/time/projects', { ...q({ calculate_price: true }), body: { name: 'x' } })
  t.equal(wrongPlace.status, 400)
})

t.test('billable: only true is billable, for pricing and for reports alike', async (t) => {
  const project = (await post('time/projects', { name: 'Billable rules' })).id
  const list = await post('billing/pricelists/time', { price: 60, project: { id: project } })
  const base = { user: { id: me.id }, project: { id: project }, duration: 2 * HOUR, start: '2025-03-10T09:00:00Z' }
  const unset = await post('time/timerecords', base, { calculate_price: true })
  t.equal(unset.billable, null, 'billable stays unset')
  t.same([unset.price, unset.unitPrice], [null, null], 'billable unset: no calculated price')
  const calculated = await client.request('POST', '/v1/time/timerecords/$calculateprice', { ...q(), body: base })
  t.same(calculated.json, { price: null, unitPrice: null }, '$calculateprice agrees: billable unset gets no price')
  const billable = await post('time/timerecords', { ...base, billable: true }, { calculate_price: true })
  t.same([billable.price, billable.unitPrice], [120, 60], '60/h × 2 h')
  const totals = await get('time/reports/readtotals', { $filter: `project/id eq '${project}'` })
  t.same(
    totals['*'],
    { count: 2, time: 4 * HOUR, billableTime: 2 * HOUR, effectiveTime: 4 * HOUR, money: 120, averagePricePerHour: 30, averageTime: 2 * HOUR },
    'billableTime counts the billable record only, money is its price',
  )
  const scanned = await get('time/reports/readtotals', { $filter: `project/id eq '${project}' and (duration ge 0 or duration eq null)` })
  t.same(scanned, totals, 'the query path says the same')

  const repriced = await put(`time/timerecords/${billable.id}`, { billable: false }, { calculate_price: true })
  t.same([repriced.price, repriced.unitPrice], [null, null], 'made not billable with calculate_price: the price goes')
  const unsetAgain = await put(`time/timerecords/${unset.id}`, { duration: 3 * HOUR }, { calculate_price: true })
  t.same([unsetAgain.price, unsetAgain.unitPrice], [null, null], 'PUT calculate_price on an unset billable: still no price')
  const after = await get('time/reports/singletotals', { $filter: `project/id eq '${project}'` })
  t.match(after, { count: 2, time: 5 * HOUR, billableTime: 0, money: 0 })
  await client.request('DELETE', `/v1/billing/pricelists/time/${list.id}`, q())
})

t.test('PUT ?calculate_price=true stores the recalculated price', async (t) => {
  // A project price (level 9) outranks the user price (level 3) the first test left.
  const project = (await post('time/projects', { name: 'Repriced' })).id
  await post('billing/pricelists/time', { price: 90, project: { id: project } })
  const record = await post('time/timerecords', { user: { id: me.id }, project: { id: project }, duration: HOUR, billable: true })
  t.equal(record.price, null, 'created without calculate_price: no price')
  const plain = await put(`time/timerecords/${record.id}`, { duration: 2 * HOUR })
  t.equal(plain.price, null, 'PUT without calculate_price leaves the price alone')
  const priced = await put(`time/timerecords/${record.id}`, { duration: 30 * 60_000 }, { calculate_price: true })
  t.same([priced.price, priced.unitPrice], [45, 90], 'recalculated from the new duration: 90/h × 30 min')
  const stored = await get(`time/timerecords/${record.id}`)
  t.same([stored.price, stored.unitPrice], [45, 90], 'and stored')
})

t.test('$updateprice keeps a price set by hand; $calculateprice stores nothing', async (t) => {
  const project = (await post('time/projects', { name: 'Manual prices' })).id
  await post('billing/pricelists/time', { price: 100, project: { id: project } })
  const manual = await post('time/timerecords', { user: { id: me.id }, project: { id: project }, duration: HOUR, billable: true, price: 12.5, priceModified: true })
  const updated = await client.request('PUT', `/v1/time/timerecords/${manual.id}/$updateprice`, q({ response_object: true }))
  t.equal(updated.status, 200)
  t.equal(updated.json.price, 12.5, 'priceModified: $updateprice keeps the price')
  t.equal((await get(`time/timerecords/${manual.id}`)).price, 12.5)
  const freed = await put(`time/timerecords/${manual.id}`, { priceModified: false })
  const recalculated = await client.request('PUT', `/v1/time/timerecords/${freed.id}/$updateprice`, q({ response_object: true }))
  t.equal(recalculated.json.price, 100, 'once priceModified is false, $updateprice applies the list')

  const countBefore = await get('time/timerecords/$count')
  const listsBefore = await get('billing/pricelists/time/$count')
  const calculated = await client.request('POST', '/v1/time/timerecords/$calculateprice', { ...q(), body: { user: { id: me.id }, project: { id: project }, duration: 3 * HOUR, billable: true } })
  t.same(calculated.json, { price: 300, unitPrice: 100 })
  t.equal(await get('time/timerecords/$count'), countBefore, '$calculateprice stored no time record')
  t.equal(await get('billing/pricelists/time/$count'), listsBefore)
})

t.test('price lists whose combination is no priority level are refused', async (t) => {
  const workType = (await post('time/worktypes', { name: 'Combo' })).id
  const project = (await post('time/projects', { name: 'Combos' })).id
  const task = (await post('time/tasks', { name: 'Combo task', project: { id: project } })).id
  const countBefore = await get('billing/pricelists/time/$count')
  const refusedCombinations: Record<string, unknown>[] = [
    { task: { id: task }, user: { id: me.id } },
    { task: { id: task }, workType: { id: workType } },
    { project: { id: project }, client: { id: (await post('time/clients', { name: 'Combo client' })).id }, user: { id: me.id } },
  ]
  for (const combination of refusedCombinations) {
    const refused = await client.request('POST', '/v1/billing/pricelists/time', { ...q(), body: { price: 5, ...combination } })
    t.equal(refused.status, 412, `${Object.keys(combination).join('+')} refused`)
    t.equal(refused.json.code, 'TL01-1104')
    t.match(refused.json.message, /allowed combinations: none; workType; user; user \+ workType; client;/, 'the message lists the allowed combinations')
    t.match(refused.json.message, /project \+ task \+ user \+ workType/)
    t.match(refused.json.constraintViolation, { entityType: 'TimePriceList', constraint: 'PriceLevel' })
  }
  t.equal(await get('billing/pricelists/time/$count'), countBefore, 'nothing was stored')

  const list = await post('billing/pricelists/time', { price: 5, user: { id: me.id } })
  const widened = await put(`billing/pricelists/time/${list.id}`, { workType: { id: workType } })
  t.same([widened.user?.id, widened.workType?.id], [me.id, workType], 'user → user + work type (level 4) is fine')
  const broken = await client.request('PUT', `/v1/billing/pricelists/time/${list.id}`, { ...q({ version_ignore: true }), body: { task: { id: task } } })
  t.equal(broken.status, 412, 'adding a task without its project is refused')
  t.equal(broken.json.code, 'TL01-1104')
  t.match(broken.json.message, /allowed combinations/)
  const stored = await get(`billing/pricelists/time/${list.id}`)
  t.equal(stored.task, null, 'the refused update changed nothing')
  const fixed = await put(`billing/pricelists/time/${list.id}`, { task: { id: task }, project: { id: project } })
  t.equal(fixed.task?.id, task, 'task + project + user + work type is level 18')
})
