/*
 * Time records nested under `time/users/{id}`, `time/tasks/{id}` and
 * `time/worktypes/{id}` (issue 26 B), over HTTP: each lists exactly the
 * parent's records, a POST there fixes the parent, `$calculateprice` prices
 * the body as the parent's, `$unbilled` and `$unbilledsummary` hold the
 * parent's billable records (and the top-level ones all of them),
 * `{id}/$updateprice` reprices one of the parent's records and refuses
 * another parent's, and a PUT there keeps the parent.
 */
import t from 'tap'
import { api, newUser, ref, sorted } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = api(client, 'nested', (await client.createTenant('nested')).token)
const ada = await newUser(client, 'nested', owner, 'Ada')
const ben = await newUser(client, 'nested', owner, 'Ben')
const HOUR = 3_600_000

const project = await owner.create('time/projects', { name: 'Nested' })
const task1 = await owner.create(`time/projects/${project}/tasks`, { name: 'one' })
const task2 = await owner.create(`time/projects/${project}/tasks`, { name: 'two' })
const coding = await owner.create('time/worktypes', { name: 'Coding' })
const design = await owner.create('time/worktypes', { name: 'Design' })
await owner.create('billing/pricelists/time', { price: 100 })
await owner.create('billing/pricelists/time', { price: 60, user: ref(ben.id) })

const adaRecords = [
  await owner.create(`time/users/${ada.id}/timerecords`, { duration: HOUR, billable: true, task: ref(task1), project: ref(project), workType: ref(coding) }),
  await ada.api.create('time/timerecords', { user: ref(ada.id), duration: 2 * HOUR, billable: false, task: ref(task2), workType: ref(design) }),
]
const benRecords = [await ben.api.create(`time/users/${ben.id}/timerecords`, { duration: HOUR, billable: true, task: ref(task1), workType: ref(design) })]

t.test('lists under users, tasks and work types', async (t) => {
  t.same(await owner.ids(`time/users/${ada.id}/timerecords`), sorted(adaRecords))
  t.same(await owner.ids(`users/${ben.id}/timerecords`), benRecords, 'the same inner collection under users/{id}')
  t.same(await owner.ids(`time/tasks/${task1}/timerecords`), sorted([adaRecords[0] as string, ...benRecords]))
  t.same(await owner.ids(`time/tasks/${task2}/timerecords`), [adaRecords[1]])
  t.same(await owner.ids(`time/worktypes/${design}/timerecords`), sorted([adaRecords[1] as string, ...benRecords]))
  t.same(await owner.ids(`time/worktypes/${coding}/timerecords`, { $filter: 'duration gt 0' }), [adaRecords[0]], 'with $filter')
  t.equal((await owner.get(`time/worktypes/${design}/timerecords/$count`)).text, '2')
  t.match((await owner.get(`time/timerecords/${benRecords[0] as string}`)).json.user, { id: ben.id }, 'a POST under time/users/{id} sets the user')
  t.equal((await owner.get(`time/users/${ada.id}/timerecords/${benRecords[0] as string}`)).status, 404, "ben's record is not among ada's")
  t.equal((await owner.get(`time/users/${ada.id}/timerecords/${adaRecords[0] as string}`)).json.id, adaRecords[0])
  const unknownUser = await owner.get('time/users/00000000-0000-4000-8000-000000000000/timerecords')
  t.equal(unknownUser.status, 404, 'an unknown parent')
  t.equal(unknownUser.json.code, 'TL01-1101')
})

t.test('a PUT under a parent keeps the parent', async (t) => {
  const moved = await owner.put(`time/tasks/${task2}/timerecords/${adaRecords[1] as string}`, { task: ref(task1), description: 'moved?' }, { version_ignore: true })
  t.equal(moved.status, 200, moved.text)
  const stored = (await owner.get(`time/timerecords/${adaRecords[1] as string}`)).json
  t.equal(stored.description, 'moved?')
  t.equal(stored.task.id, task2, 'the task the path names stays')
})

t.test('$calculateprice under a parent prices the record as the parent’s', async (t) => {
  const body = { duration: HOUR, billable: true }
  const asBen = await owner.post(`time/users/${ben.id}/timerecords/$calculateprice`, body)
  t.equal(asBen.status, 200, asBen.text)
  t.same(asBen.json, { price: 60, unitPrice: 60 }, "ben's own price list applies")
  t.same((await owner.post(`time/users/${ada.id}/timerecords/$calculateprice`, body)).json, { price: 100, unitPrice: 100 }, 'ada: the price for all')
  t.same((await owner.post(`time/worktypes/${coding}/timerecords/$calculateprice`, { ...body, user: ref(ben.id) })).json, { price: 60, unitPrice: 60 })
  t.equal((await owner.get(`time/tasks/${task1}/timerecords/$calculateprice`)).status, 404, '$calculateprice needs POST')
  t.equal((await owner.ids(`time/users/${ben.id}/timerecords`)).length, 1, 'nothing was stored')
})

t.test('$unbilled and $unbilledsummary', async (t) => {
  const billable = [adaRecords[0] as string, ...benRecords]
  t.same(await owner.ids('time/timerecords/$unbilled'), sorted(billable), 'every billable record')
  t.same(await owner.ids(`time/users/${ada.id}/timerecords/$unbilled`), [adaRecords[0]], "ada's")
  t.same(await owner.ids(`time/tasks/${task1}/timerecords/$unbilled`), sorted(billable))
  t.same(await owner.ids(`time/worktypes/${design}/timerecords/$unbilled`), benRecords)
  t.same(await owner.ids('time/timerecords/$unbilled', { $filter: `user/id eq '${ben.id}'` }), benRecords, 'with $filter')
  t.same(await ada.api.ids('time/timerecords/$unbilled'), sorted(billable), 'records are visible to every user')

  const summary = await owner.get('time/timerecords/$unbilledsummary')
  t.equal(summary.status, 200, summary.text)
  t.same(
    summary.json,
    [
      {
        key: '*',
        summaries: [
          { name: 'count()', value: '2' },
          { name: 'sum(duration)', value: String(2 * HOUR) },
          { name: 'sum(price)', value: '0' },
        ],
      },
    ],
    'count, time and money by default',
  )
  const byUser = await owner.get(`time/tasks/${task1}/timerecords/$unbilledsummary`, { summary: 'user/id;count()' })
  t.same(
    (byUser.json as { key: string; summaries: { value: string }[] }[]).map((entry) => [entry.key, entry.summaries[0]?.value]).sort(),
    sorted([ada.id, ben.id]).map((id) => [id, '1']),
    'grouped as the summary parameter says',
  )
  t.same((await owner.get(`time/users/${ada.id}/timerecords/$unbilledsummary`, { summary: 'count()' })).json, [{ key: '*', summaries: [{ name: 'count()', value: '1' }] }])
  t.equal((await owner.post('time/timerecords/$unbilled', {})).status, 405, 'GET only')
  t.equal((await owner.get('time/timerecords/$unbilledsummary', { summary: 'sum(nothing)' })).json.code, 'TL01-1105', 'a bad summary: 400')
})

t.test('{id}/$updateprice under a parent', async (t) => {
  const record = benRecords[0] as string
  const updated = await owner.put(`time/users/${ben.id}/timerecords/${record}/$updateprice`, undefined)
  t.equal(updated.status, 200, updated.text)
  t.equal(updated.json.price, 60, "priced by ben's list")
  t.equal(updated.json.unitPrice, 60)
  const viaTask = await owner.put(`time/tasks/${task1}/timerecords/${adaRecords[0] as string}/$updateprice`, undefined)
  t.equal(viaTask.json.price, 100)
  const wrongParent = await owner.put(`time/users/${ada.id}/timerecords/${record}/$updateprice`, undefined)
  t.equal(wrongParent.status, 404, "ben's record is not found among ada's")
  t.equal(wrongParent.json.code, 'TL01-1101')
  t.equal((await owner.put(`time/worktypes/${coding}/timerecords/${record}/$updateprice`, undefined)).status, 404)
  const summary = await owner.get('time/timerecords/$unbilledsummary', { summary: 'sum(price)' })
  t.same(summary.json, [{ key: '*', summaries: [{ name: 'sum(price)', value: '160' }] }], 'the stored prices are summed up')
})

t.test('inner collections nest: a task of a project of a user, and its time records', async (t) => {
  const adaProject = await ada.api.create('time/projects', { name: 'ada nested' })
  const adaTask = await ada.api.create(`users/${ada.id}/projects/${adaProject}/tasks`, { name: 'deep' })
  const deepRecord = await ada.api.create(`users/${ada.id}/projects/${adaProject}/tasks/${adaTask}/timerecords`, { user: ref(ada.id), duration: HOUR })
  const stored = (await owner.get(`time/timerecords/${deepRecord}`)).json
  t.equal(stored.task.id, adaTask, 'the innermost parent is set')
  t.same(await owner.ids(`users/${ada.id}/projects/${adaProject}/tasks/${adaTask}/timerecords`), [deepRecord])
  t.equal((await owner.get(`users/${ada.id}/projects/${adaProject}/tasks/${adaTask}/timerecords/$count`)).text, '1')
  const wrongOwner = await owner.get(`users/${ben.id}/projects/${adaProject}/tasks/${adaTask}/timerecords`)
  t.equal(wrongOwner.status, 404, "ada's project is not found among ben's")
  t.equal((await owner.get(`time/projects/${project}/tasks/${adaTask}/timerecords`)).status, 404, 'nor her task in another project')
  t.equal((await owner.get(`users/${ada.id}/projects/${adaProject}/tasks/${adaTask}/timerecords/$metadata`)).json.path, `/v1/users/{id}/projects/{id}/tasks/{id}/timerecords`)
})

t.test('the trash of an inner collection holds only the parent’s trashed children', async (t) => {
  const adaGone = await owner.create(`time/users/${ada.id}/timerecords`, { duration: HOUR })
  const benGone = await owner.create(`time/users/${ben.id}/timerecords`, { duration: HOUR })
  await owner.del(`time/timerecords/${adaGone}`)
  await owner.del(`time/timerecords/${benGone}`)
  t.same(await owner.ids(`time/users/${ada.id}/timerecords/@deleted`), [adaGone])
  t.equal((await owner.get(`time/users/${ada.id}/timerecords/${adaGone}/@deleted`)).json.id, adaGone)
  t.equal((await owner.get(`time/users/${ada.id}/timerecords/${benGone}/@deleted`)).status, 404, "ben's trashed record is not among ada's")
  t.notOk((await owner.ids(`time/users/${ada.id}/timerecords`)).includes(adaGone), 'and not among the live ones')
})
