/*
 * Inner collections and views over HTTP: each answers exactly the expected
 * ids (objects in the trash and hidden ones excluded), a POST to an inner
 * collection fixes the parent reference, `$count` of an inner collection
 * counts the same rows, and views are relative to the caller.
 */
import t from 'tap'
import { api, newUser, ref, sorted } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = api(client, 'views', (await client.createTenant('views')).token)
const ownerId = (await owner.get('users/@self')).json.id as string
const bert = await newUser(client, 'views', owner, 'Bert')
const cleo = await newUser(client, 'views', owner, 'Cleo')

t.test('inner collections of a project', async (t) => {
  const p1 = await owner.create('time/projects', { name: 'P1' })
  const p2 = await owner.create('time/projects', { name: 'P2' })
  const workType = await owner.create('time/worktypes', { name: 'Coding' })
  const tasks = [await owner.create(`time/projects/${p1}/tasks`, { name: 'a' }), await owner.create('time/tasks', { name: 'b', project: ref(p1) })]
  await owner.create('time/tasks', { name: 'other', project: ref(p2) })
  const records = [await owner.create(`time/projects/${p1}/timerecords`, { duration: 1000 })]
  await owner.create('time/timerecords', { duration: 1000, project: ref(p2) })
  const members = [await owner.create(`time/projects/${p1}/members`, { user: ref(bert.id) }), await owner.create(`time/projects/${p1}/members`, { user: ref(cleo.id) })]
  const links = [await owner.create(`time/projects/${p1}/worktypelinks`, { workType: ref(workType) })]
  const impulses = [await owner.create(`time/projects/${p1}/impulses`, { mode: 'PAUSE' })]
  await owner.create('time/impulses', { mode: 'PAUSE', project: ref(p2) })

  t.same(await owner.ids(`time/projects/${p1}/tasks`), sorted(tasks))
  t.same(await owner.ids(`time/projects/${p1}/timerecords`), sorted(records))
  t.same(await owner.ids(`time/projects/${p1}/members`), sorted(members))
  t.same(await owner.ids(`time/projects/${p1}/worktypelinks`), sorted(links))
  t.same(await owner.ids(`time/projects/${p1}/impulses`), sorted(impulses))
  t.equal((await owner.get(`time/projects/${p1}/members/$count`)).text, '2')
  t.match((await owner.get(`time/tasks/${tasks[0] as string}`)).json.project, { id: p1 }, 'a POST to an inner collection sets the parent')
  t.same(await owner.ids(`projects/${p1}/tasks`, { $filter: "name eq 'b'" }), [tasks[1]], 'inner collections take $filter (alias path too)')

  const removed = await owner.del(`time/tasks/${tasks[0] as string}`)
  t.equal(removed.status, 200)
  t.same(await owner.ids(`time/projects/${p1}/tasks`), [tasks[1]], 'a trashed child leaves the inner collection')
})

t.test('inner collections of clients, users, departments and bills', async (t) => {
  const c1 = await owner.create('time/clients', { name: 'C1' })
  const c2 = await owner.create('time/clients', { name: 'C2' })
  const projects = [await owner.create('time/projects', { name: 'for c1', client: ref(c1) }), await owner.create(`time/clients/${c1}/projects`, { name: 'inner' })]
  await owner.create('time/projects', { name: 'for c2', client: ref(c2) })
  const bills = [await owner.create(`time/clients/${c1}/bills`, { description: 'b1' })]
  await owner.create('billing/bills', { description: 'b2', client: ref(c2) })
  const contacts = [await owner.create(`time/clients/${c1}/contacts`, { lastName: 'X' })]
  await owner.create('time/contacts', { lastName: 'Y', client: ref(c2) })
  t.same(await owner.ids(`time/clients/${c1}/projects`), sorted(projects))
  t.same(await owner.ids(`clients/${c1}/bills`), sorted(bills))
  t.same(await owner.ids(`time/clients/${c1}/contacts`), sorted(contacts))

  const bertProjects = [await bert.api.create('time/projects', { name: 'bert 1' }), await owner.create('time/projects', { name: 'bert 2', owner: ref(bert.id) })]
  t.same(await owner.ids(`users/${bert.id}/projects`), sorted(bertProjects))

  const d1 = await owner.create('departments', { name: 'D1' })
  const d2 = await owner.create('departments', { name: 'D2' })
  const departmentMembers = [await owner.create(`departments/${d1}/members`, { user: ref(bert.id) }), await owner.create('departmentmembers', { department: ref(d1), user: ref(ownerId) })]
  await owner.create(`departments/${d2}/members`, { user: ref(cleo.id) })
  t.same(await owner.ids(`departments/${d1}/members`), sorted(departmentMembers))

  const bill = bills[0] as string
  const items = [await owner.create(`billing/bills/${bill}/items`, { docIndex: 1 }), await owner.create('billing/billitems', { bill: ref(bill), docIndex: 2 })]
  const vats = [await owner.create(`billing/bills/${bill}/vats`, { vatRate: 21, vatPrice: 1 })]
  const otherBill = await owner.create('billing/bills', { description: 'other' })
  await owner.create(`billing/bills/${otherBill}/items`, { docIndex: 1 })
  await owner.create(`billing/bills/${otherBill}/vats`, { vatRate: 10, vatPrice: 1 })
  t.same(await owner.ids(`billing/bills/${bill}/items`), sorted(items))
  t.same(await owner.ids(`billing/bills/${bill}/vats`), sorted(vats))
  t.equal((await owner.get(`billing/bills/${bill}/items`, { $orderby: 'docIndex desc' })).json[0].id, items[1], 'inner collections take $orderby')
})

t.test('project views', async (t) => {
  // Users of its own, so the memberships made by the tests above do not count.
  const pia = await newUser(client, 'views', owner, 'Pia')
  const quinn = await newUser(client, 'views', owner, 'Quinn')
  const own = await pia.api.create('time/projects', { name: 'pia own' })
  const personal = await pia.api.create('time/projects', { name: 'pia personal', personal: true })
  const member = await owner.create('time/projects', { name: 'pia member' })
  const memberTrashed = await owner.create('time/projects', { name: 'member but trashed' })
  const inactive = await owner.create('time/projects', { name: 'inactive', active: false })
  const ineffective = await owner.create('time/projects', { name: 'ineffective', effective: false })
  const quinnPersonal = await quinn.api.create('time/projects', { name: 'quinn personal', personal: true })
  await owner.create(`time/projects/${member}/members`, { user: ref(pia.id) })
  await owner.create(`time/projects/${memberTrashed}/members`, { user: ref(pia.id) })
  const trashedMembership = await owner.create(`time/projects/${inactive}/members`, { user: ref(pia.id) })
  await owner.del(`time/projectmembers/${trashedMembership}`)
  await owner.create(`time/projects/${ineffective}/members`, { user: ref(quinn.id) })
  await owner.del(`time/projects/${memberTrashed}`)

  t.same(await pia.api.ids('time/projects/@member'), [member], '@member: live memberships of live projects')
  t.same(await quinn.api.ids('time/projects/@member'), [ineffective])
  const piaOwned = await pia.api.ids(`users/${pia.id}/projects`)
  t.same(await pia.api.ids('time/projects/@own'), piaOwned, '@own: every project pia owns')
  t.ok(piaOwned.includes(own) && piaOwned.includes(personal))
  t.notOk((await owner.ids(`users/${pia.id}/projects`)).includes(personal), "a personal project stays hidden in the owner's view of pia's projects")

  const trackable = await pia.api.ids('time/projects/@trackable')
  t.ok(trackable.includes(own) && trackable.includes(personal) && trackable.includes(member), '@trackable: active, effective, visible')
  for (const excluded of [inactive, ineffective, memberTrashed, quinnPersonal]) t.notOk(trackable.includes(excluded), `@trackable excludes ${excluded}`)
  t.notOk((await owner.ids('time/projects/@trackable')).includes(personal), "another user's personal project is not trackable, not even for the owner")
  t.same(await pia.api.ids('time/projects/@member', { $filter: "name eq 'nothing'" }), [], 'views take $filter')
})

t.test('impulse views', async (t) => {
  const mine = [await bert.api.create('time/impulses', { mode: 'STOPWATCH', start: '2024-01-01T08:00:00Z' }), await bert.api.create('time/impulses', { mode: 'STOPWATCH' })]
  const paused = await bert.api.create('time/impulses', { mode: 'PAUSE' })
  const cleoRunning = await cleo.api.create('time/impulses', { mode: 'STOPWATCH', start: '2024-01-01T08:00:00Z' })
  t.same(await bert.api.ids('time/impulses/@stopwatch'), sorted(mine), "@stopwatch: the caller's STOPWATCH impulses")
  t.same(await cleo.api.ids('time/impulses/@stopwatch'), [cleoRunning])
  t.same(await bert.api.ids('time/impulses/@default'), sorted([...mine, paused]), "@default: the caller's impulses")
  t.notOk((await owner.ids('time/impulses/@default')).includes(cleoRunning), "@default of the owner: only the owner's")
})

t.test('departments, users, accounts', async (t) => {
  const rita = await newUser(client, 'views', owner, 'Rita')
  const sam = await newUser(client, 'views', owner, 'Sam')
  const d1 = await owner.create('departments', { name: 'Sales' })
  const d2 = await owner.create('departments', { name: 'Support' })
  const d3 = await owner.create('departments', { name: 'Gone' })
  await owner.create(`departments/${d1}/members`, { user: ref(sam.id) })
  await owner.create(`departments/${d3}/members`, { user: ref(sam.id) })
  await owner.create(`departments/${d2}/members`, { user: ref(rita.id) })
  await owner.del(`departments/${d3}`)
  t.same(await sam.api.ids('departments/@member'), [d1])
  t.same(await rita.api.ids('departments/@member'), [d2])
  t.equal((await rita.api.get('users/@self')).json.id, rita.id, 'users/@self is the caller, as an object')
  const account = await owner.get('accounts/@own')
  t.notOk(Array.isArray(account.json), 'accounts/@own is the account object')
  t.match(account.json, { urlPrefix: 'views', name: 'views Ltd' })
})

t.test('accesses beyond the license limit', async (t) => {
  const accountId = (await owner.get('accounts/@own')).json.id as string
  const time = [
    await owner.create('accesses', { user: ref(ownerId), product: 'TIME' }),
    await owner.create('accesses', { user: ref(bert.id), product: 'TIME' }),
    await owner.create('accesses', { user: ref(cleo.id), product: 'TIME' }),
  ]
  const billing = [await owner.create('accesses', { user: ref(ownerId), product: 'BILLING' }), await owner.create('accesses', { user: ref(bert.id), product: 'BILLING' })]
  await owner.create('accesses', { user: ref(ownerId), product: 'CORE' })
  t.same(await owner.ids('accesses/@exceeded'), [], 'no limit: nothing exceeds')
  const limited = await owner.put(`accounts/${accountId}`, { licenseLimit: 1 }, { version_ignore: true })
  t.equal(limited.status, 200, limited.text)
  t.same(await owner.ids('accesses/@exceeded'), sorted([time[1] as string, time[2] as string, billing[1] as string]), 'the later accesses of each product')
  await owner.del(`accesses/${time[0] as string}`)
  t.same(await owner.ids('accesses/@exceeded'), sorted([time[2] as string, billing[1] as string]), 'a trashed access frees its place')
  await owner.put(`accounts/${accountId}`, { licenseLimit: 2 }, { version_ignore: true })
  t.same(await bert.api.ids('accesses/@exceeded'), [], 'within the limit')
})

t.test('unknown views and inner collections', async (t) => {
  t.equal((await owner.get('time/projects/@nothing')).json.code, 'TL01-9003')
  const project = await owner.create('time/projects', { name: 'x' })
  t.equal((await owner.get(`time/projects/${project}/nothing`)).json.code, 'TL01-9003')
})
