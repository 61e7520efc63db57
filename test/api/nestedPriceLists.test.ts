/*
 * Price lists nested under `time/users/{id}`, `time/worktypes/{id}` and
 * `time/projects/{id}`, and `$findpricelist` (issue 26 B), over HTTP: each
 * inner collection lists the parent's price lists and a POST there names
 * the parent; `$findpricelist` answers the price list that applies to a
 * combination (the highest level, as for a time record), inside an inner
 * collection with the parent named; 404 when none applies, 400 for a
 * dimension that is no reference.
 */
import t from 'tap'
import { api, newUser, ref, sorted } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = api(client, 'prices26', (await client.createTenant('prices26')).token)
const ada = await newUser(client, 'prices26', owner, 'Ada')
const customer = await owner.create('time/clients', { name: 'Customer' })
const project = await owner.create('time/projects', { name: 'Priced', client: ref(customer) })
const other = await owner.create('time/projects', { name: 'Other' })
const task = await owner.create(`time/projects/${project}/tasks`, { name: 'Task' })
const coding = await owner.create('time/worktypes', { name: 'Coding' })

const forAda = await owner.create(`time/users/${ada.id}/pricelists`, { price: 50 })
const forAdaCoding = await owner.create(`time/worktypes/${coding}/pricelists`, { price: 55, user: ref(ada.id) })
const forProject = await owner.create(`time/projects/${project}/pricelists`, { price: 90 })
const forProjectAda = await owner.create('billing/pricelists/time', { price: 95, project: ref(project), user: ref(ada.id) })
const forTask = await owner.create('billing/pricelists/time', { price: 120, task: ref(task), project: ref(project) })

t.test('inner collections of price lists', async (t) => {
  t.same(await owner.ids(`time/users/${ada.id}/pricelists`), sorted([forAda, forAdaCoding, forProjectAda]))
  t.same(await owner.ids(`time/worktypes/${coding}/pricelists`), [forAdaCoding])
  t.same(await owner.ids(`time/projects/${project}/pricelists`), sorted([forProject, forProjectAda, forTask]))
  t.same(await owner.ids(`time/projects/${other}/pricelists`), [])
  t.match((await owner.get(`billing/pricelists/time/${forAda}`)).json.user, { id: ada.id }, 'a POST under time/users/{id} names the user')
  t.match((await owner.get(`billing/pricelists/time/${forProject}`)).json.project, { id: project })
  t.equal((await owner.get(`time/projects/${project}/pricelists/$metadata`)).json.path, '/v1/time/projects/{id}/pricelists')
})

t.test('$findpricelist', async (t) => {
  const find = (path: string, query: Record<string, string>) => owner.get(`${path}/$findpricelist`, query)
  const top = 'billing/pricelists/time'
  t.equal((await find(top, { user: ada.id })).json.id, forAda, 'per user')
  t.equal((await find(top, { user: ada.id, workType: coding })).json.id, forAdaCoding, 'per user per work type beats per user')
  t.equal((await find(top, { user: ada.id, project })).json.id, forProjectAda, 'per project per user beats both')
  t.equal((await find(top, { project, workType: coding })).json.id, forProject, 'per project')
  t.equal((await find(top, { task })).json.id, forTask, "a task alone: its project is the task's")
  const found = await find(top, { user: ada.id, project, task })
  t.equal(found.json.id, forTask)
  t.equal(found.json.price, 120)
  t.match(found.json.project, { id: project, name: 'Priced' }, 'answered as a GET of the price list (references embedded)')

  t.equal((await find(`time/users/${ada.id}/pricelists`, {})).json.id, forAda, 'inside time/users/{id}: that user')
  t.equal((await find(`time/users/${ada.id}/pricelists`, { workType: coding })).json.id, forAdaCoding)
  t.equal((await find(`time/worktypes/${coding}/pricelists`, { user: ada.id })).json.id, forAdaCoding, 'inside time/worktypes/{id}: that work type')
  t.equal((await find(`time/projects/${project}/pricelists`, { user: ada.id })).json.id, forProjectAda, 'inside time/projects/{id}: that project')
  t.equal((await find(`time/projects/${project}/pricelists`, { user: ada.id, project: other })).json.id, forProjectAda, 'the path names the project, not the query')

  const none = await find(top, { project: other })
  t.equal(none.status, 404, 'no price list applies')
  t.equal(none.json.code, 'TL01-1101')
  t.match(none.json.message, /no TimePriceList applies to project/)
  const bad = await find(top, { user: 'x'.repeat(100) })
  t.equal(bad.status, 400, 'a dimension that is no reference')
  t.equal(bad.json.code, 'TL01-1105')
  t.equal((await owner.post(`${top}/$findpricelist`, {})).status, 404, 'GET only')

  await owner.create('billing/pricelists/time', { price: 10 })
  t.equal((await find(top, { project: other })).json.price, 10, 'the price for all applies when nothing else does')
  await owner.del(`billing/pricelists/time/${forTask}`)
  t.equal((await find(top, { task })).json.id, forProject, 'a trashed price list no longer applies')
})
