/*
 * The trash over HTTP: for every cascading parent, delete moves the parent
 * and every related record to the trash (gone from lists, counts,
 * `append` counters and bill totals, listed under @deleted), restore brings
 * all of it back with the same ids, fields and counters, and hard delete
 * leaves nothing (not in /trash, not under @deleted, a child trashed
 * earlier included), also after a restart. @deleted answers stubs with
 * no_expand. Restoring a child whose parent is in the trash is refused, and
 * a crash right after an acknowledged cascade delete keeps the whole group.
 */
import t, { type Test } from 'tap'
import type { AnswerJson } from '../helpers/http.js'
import { killHard, spawnServer, startInProcess, tempDataDir } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const dataDir = tempDataDir('trash')
let server = await startInProcess(dataDir)
t.teardown(() => server.stop())
const owner = await server.client.createTenant('bin')
const token = owner.token
const q = (query: Record<string, string | number | boolean> = {}) => ({ tenant: 'bin', query: { token, ...query } })
const me = (await server.client.request('GET', '/v1/users/@self', q())).json

async function post(path: string, body: unknown): Promise<AnswerJson> {
  const response = await server.client.request('POST', `/v1/${path}`, { ...q({ response_object: true }), body })
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${response.text}`)
  return response.json
}
const status = async (path: string) => (await server.client.request('GET', `/v1/${path}`, q())).status
const read = async (path: string, query: Record<string, string | number | boolean> = {}) => (await server.client.request('GET', `/v1/${path}`, q(query))).json

interface Family {
  parent: { path: string; id: string }
  children: { path: string; id: string }[]
  /** The objects whose counters and totals `observe` reads. */
  watched: Watched
}

interface Watched {
  project: string
  client: string
  bill: string
}

/** A live object, or the trashed one when it is in the trash. */
async function readLiveOrDeleted(path: string, id: string, query: Record<string, string | number | boolean> = {}): Promise<AnswerJson> {
  const live = await server.client.request('GET', `/v1/${path}/${id}`, q(query))
  if (live.status === 200) return live.json
  const deleted = await server.client.request('GET', `/v1/${path}/${id}/@deleted`, q(query))
  if (deleted.status !== 200) throw new Error(`${path}/${id} is neither live nor in the trash: ${deleted.status} ${deleted.text}`)
  return deleted.json
}

/** The `append` counters and the bill totals (a summary over live bills) a cascade can move, as numbers. */
async function observe(watched: Watched): Promise<Record<string, number>> {
  const project = await readLiveOrDeleted('time/projects', watched.project, { append: 'timerecords-count,tasks-count,members-count' })
  const client = await readLiveOrDeleted('time/clients', watched.client, { append: 'projects-count,bills-count' })
  const liveBills = await server.client.request('GET', '/v1/billing/bills/summary', q({ $filter: `id eq '${watched.bill}'`, summary: 'count();sum(itemsPrice);sum(totalPrice)' }))
  if (liveBills.status !== 200) throw new Error(`bill summary: ${liveBills.status} ${liveBills.text}`)
  const [count, itemsSum, totalSum] = (liveBills.json[0]?.summaries ?? []).map((entry: { value: string | null }) => Number(entry.value ?? 0))
  return {
    projectTimeRecords: project.timeRecordsCount,
    projectTasks: project.tasksCount,
    projectMembers: project.membersCount,
    clientProjects: client.projectsCount,
    clientBills: client.billsCount,
    liveBills: count,
    liveBillsItemsPrice: itemsSum,
    liveBillsTotalPrice: totalSum,
  }
}

/**
 * What the cascade delete of each parent changes in `observe` (everything
 * else stays as it was): trashed children leave their parents' counters and
 * sums, a trashed bill leaves the bill summary.
 */
const billGone = { clientBills: 0, liveBills: 0, liveBillsItemsPrice: 0, liveBillsTotalPrice: 0 }
const CHANGED_BY_DELETE: Record<string, Record<string, number>> = {
  Bill: billGone,
  Project: { projectTimeRecords: 0, projectTasks: 0, projectMembers: 0, clientProjects: 0 },
  WorkType: {},
  Department: {},
  User: { projectMembers: 0 },
  Client: billGone,
}

/** A parent of each cascading type with one record of every type it cascades to. */
async function families(): Promise<Record<string, Family>> {
  const user = await post('users', { firstName: 'Casc', lastName: 'Ade', email: `c${Date.now()}${Math.random()}@bin.test`, password: 'cascade-password' })
  const workType = await post('time/worktypes', { name: 'WT' })
  const customer = await post('time/clients', { name: 'Cascade client' })
  const project = await post('time/projects', { name: 'Cascade project', client: { id: customer.id } })
  const task = await post(`time/projects/${project.id}/tasks`, { name: 'T' })
  const record = await post('time/timerecords', { user: { id: me.id }, project: { id: project.id }, duration: 1000 })
  const member = await post(`time/projects/${project.id}/members`, { user: { id: user.id } })
  const link = await post(`time/projects/${project.id}/worktypelinks`, { workType: { id: workType.id } })
  const impulse = await post('time/impulses', { user: { id: me.id }, project: { id: project.id }, mode: 'PAUSE' })
  const bill = await post('billing/bills', { client: { id: customer.id }, description: 'B' })
  const item = await post(`billing/bills/${bill.id}/items`, { quantity: 2, unitPrice: 10 })
  const vat = await post(`billing/bills/${bill.id}/vats`, { vatRate: 20, vatPrice: 4 })
  const contact = await post(`time/clients/${customer.id}/contacts`, { firstName: 'C', lastName: 'P' })
  const department = await post('departments', { name: 'D' })
  const departmentMember = await post(`departments/${department.id}/members`, { user: { id: user.id } })
  const access = await post('accesses', { user: { id: user.id }, product: 'TIME' })
  const spending = await post('spendingtime', { user: { id: user.id }, duration: 1200000 })
  const otherProject = await post('time/projects', { name: 'Other project' })
  const workTypeLink = await post(`time/projects/${otherProject.id}/worktypelinks`, { workType: { id: workType.id } })
  const watched = { project: project.id, client: customer.id, bill: bill.id }
  const families: Record<string, Omit<Family, 'watched'>> = {
    Bill: {
      parent: { path: 'billing/bills', id: bill.id },
      children: [
        { path: 'billing/billitems', id: item.id },
        { path: 'billing/billvats', id: vat.id },
      ],
    },
    Project: {
      parent: { path: 'time/projects', id: project.id },
      children: [
        { path: 'time/tasks', id: task.id },
        { path: 'time/timerecords', id: record.id },
        { path: 'time/projectmembers', id: member.id },
        { path: 'time/projectworktypelinks', id: link.id },
        { path: 'time/impulses', id: impulse.id },
      ],
    },
    WorkType: {
      parent: { path: 'time/worktypes', id: workType.id },
      children: [
        { path: 'time/projectworktypelinks', id: link.id },
        { path: 'time/projectworktypelinks', id: workTypeLink.id },
      ],
    },
    Department: { parent: { path: 'departments', id: department.id }, children: [{ path: 'departmentmembers', id: departmentMember.id }] },
    User: {
      parent: { path: 'users', id: user.id },
      children: [
        { path: 'accesses', id: access.id },
        { path: 'spendingtime', id: spending.id },
        { path: 'time/projectmembers', id: member.id },
      ],
    },
    Client: {
      parent: { path: 'time/clients', id: customer.id },
      children: [
        { path: 'time/contacts', id: contact.id },
        { path: 'billing/bills', id: bill.id },
        { path: 'billing/billitems', id: item.id },
        { path: 'billing/billvats', id: vat.id },
      ],
    },
  }
  return Object.fromEntries(Object.entries(families).map(([name, family]) => [name, { ...family, watched }]))
}

/** Nothing of these objects in /trash nor under @deleted, as a list or one by one. */
async function nothingLeft(t: Test, objects: readonly { path: string; id: string }[], when: string): Promise<void> {
  for (const object of objects) {
    t.equal(await status(`${object.path}/${object.id}`), 404, `${object.path} ${object.id} is gone ${when}`)
    t.equal(await status(`${object.path}/${object.id}/@deleted`), 404, `${object.path} ${object.id} is not under @deleted ${when}`)
    const deletedList = (await read(`${object.path}/@deleted`, { $top: 1000 })) as { id: string }[]
    t.notOk(
      deletedList.some((entry) => entry.id === object.id),
      `${object.path}/@deleted does not list it ${when}`,
    )
    const trashList = (await read('trash', { $filter: `deletedObjectId eq '${object.id}'` })) as unknown[]
    t.equal(trashList.length, 0, `/trash has no item of ${object.id} ${when}`)
  }
}

for (const name of ['Bill', 'Project', 'WorkType', 'Department', 'User', 'Client']) {
  t.test(`${name}: trash, restore, hard delete`, async (t) => {
    const family = (await families())[name] as Family
    const everything = [family.parent, ...family.children]
    const before = new Map<string, unknown>()
    for (const object of everything) before.set(object.id, await read(`${object.path}/${object.id}`))
    const countersBefore = await observe(family.watched)
    t.same([countersBefore.liveBillsItemsPrice, countersBefore.liveBillsTotalPrice], [20, 24], 'the bill totals 2 × 10, + 4 VAT')
    const removed = await server.client.request('DELETE', `/v1/${family.parent.path}/${family.parent.id}`, q())
    t.equal(removed.status, 200)
    t.same(await observe(family.watched), { ...countersBefore, ...CHANGED_BY_DELETE[name] }, 'counters and totals after the cascade delete')
    const trashItemId = removed.json.trashItem.id as string
    for (const object of everything) {
      t.equal(await status(`${object.path}/${object.id}`), 404, `${object.path} ${object.id} is gone`)
      const deleted = await read(`${object.path}/${object.id}/@deleted`)
      t.equal(deleted.id, object.id, `${object.path} is listed as deleted`)
      const deletedList = (await read(`${object.path}/@deleted`)) as { id: string }[]
      t.ok(deletedList.some((entry) => entry.id === object.id))
      const live = (await read(object.path, { $top: 1000 })) as { id: string }[]
      t.notOk(
        live.some((entry) => entry.id === object.id),
        `${object.path} not in the normal list`,
      )
    }
    const trashList = (await read('trash', { $filter: `groupId eq '${trashItemId}'` })) as { deletedObjectId: string }[]
    t.equal(trashList.length, everything.length, 'one trash item per object, all in one group')
    const restored = await server.client.request('GET', `/v1/trash/${trashItemId}/$restore`, q())
    t.equal(restored.status, 200, restored.text)
    for (const object of everything) t.same(await read(`${object.path}/${object.id}`), before.get(object.id), `${object.path} is back as it was`)
    t.same(await observe(family.watched), countersBefore, 'counters and totals are back after the restore')
    t.equal(((await read('trash', { $filter: `groupId eq '${trashItemId}'` })) as unknown[]).length, 0, 'the trash items are gone')

    // A child trashed on its own before must go with its parent too.
    const child = family.children[0] as { path: string; id: string }
    const trashedChild = await server.client.request('DELETE', `/v1/${child.path}/${child.id}`, q())
    t.equal(trashedChild.status, 200, trashedChild.text)
    const hard = await server.client.request('DELETE', `/v1/${family.parent.path}/${family.parent.id}`, q({ hard: true }))
    t.equal(hard.status, 200)
    await nothingLeft(t, everything, 'after the hard delete')
    t.equal(await status(`trash/${trashedChild.json.trashItem.id}`), 404, "the earlier child's trash item is gone")
    await server.stop()
    server = await startInProcess(dataDir)
    await nothingLeft(t, everything, 'after a restart')
  })
}

t.test('@deleted, as a list and one by one, answers stubs for references with no_expand=true', async (t) => {
  const project = await post('time/projects', { name: 'Stubbed' })
  const record = await post('time/timerecords', { user: { id: me.id }, project: { id: project.id }, duration: 5000 })
  const removed = await server.client.request('DELETE', `/v1/time/timerecords/${record.id}`, q())
  t.equal(removed.status, 200)
  const isStub = (value: AnswerJson, id: string, label: string) => {
    t.equal(value?.id, id, `${label}: the reference names its object`)
    t.ok(typeof value?.displayName === 'string', `${label}: the stub has its display name`)
    t.notOk('createdAt' in value, `${label}: a stub, not the embedded object`)
  }
  const expanded = await read(`time/timerecords/${record.id}/@deleted`)
  t.ok('createdAt' in expanded.project, 'without no_expand the project is embedded')
  const single = await read(`time/timerecords/${record.id}/@deleted`, { no_expand: true })
  isStub(single.project, project.id, 'single')
  isStub(single.user, me.id, 'single')
  isStub(single.trashItem, removed.json.trashItem.id, 'single')
  const listed = (await read('time/timerecords/@deleted', { no_expand: true, $filter: `id eq '${record.id}'` })) as AnswerJson[]
  t.equal(listed.length, 1)
  isStub(listed[0]?.project, project.id, 'list')
  isStub(listed[0]?.user, me.id, 'list')
})

t.test('counters follow trash and restore', async (t) => {
  const project = await post('time/projects', { name: 'Counted' })
  const tasks = [await post('time/tasks', { name: 'a', project: { id: project.id } }), await post('time/tasks', { name: 'b', project: { id: project.id } })]
  const count = async () => ((await read('time/projects', { $filter: `id eq '${project.id}'`, append: 'tasks-count' })) as { tasksCount: number }[])[0]?.tasksCount
  t.equal(await count(), 2)
  const removed = await server.client.request('DELETE', `/v1/time/tasks/${tasks[0].id}`, q())
  t.equal(await count(), 1)
  await server.client.request('GET', `/v1/trash/${removed.json.trashItem.id}/$restore`, q())
  t.equal(await count(), 2)
})

t.test('a child cannot be restored while its parent is in the trash', async (t) => {
  const project = await post('time/projects', { name: 'Parent' })
  const task = await post('time/tasks', { name: 'child', project: { id: project.id } })
  const removed = await server.client.request('DELETE', `/v1/time/projects/${project.id}`, q())
  const groupItems = (await read('trash', { $filter: `groupId eq '${removed.json.trashItem.id}'` })) as { id: string; deletedObjectId: string }[]
  const childItem = groupItems.find((item) => item.deletedObjectId === task.id)
  const refused = await server.client.request('GET', `/v1/trash/${childItem?.id}/$restore`, q())
  t.equal(refused.status, 412)
  t.equal(refused.json.code, 'TL01-1106')
  t.match(refused.json.message, new RegExp(`Project '${project.id}'`))
  const emptied = await server.client.request('DELETE', `/v1/trash/${removed.json.trashItem.id}`, q())
  t.equal(emptied.status, 200)
  t.equal(await status(`time/projects/${project.id}/@deleted`), 404, 'emptying the trash item removes the group for good')
  t.equal(await status(`time/tasks/${task.id}/@deleted`), 404)
})

t.test('a crash right after an acknowledged cascade delete keeps the whole group in the trash', async (t) => {
  const crashDir = tempDataDir('trash-crash')
  let child = await spawnServer(crashDir)
  const tenant = await child.client.createTenant('crash')
  const cq = { tenant: 'crash', query: { token: tenant.token } }
  const project = (await child.client.request('POST', '/v1/time/projects', { ...cq, body: { name: 'P' } })).json.id
  const me2 = (await child.client.request('GET', '/v1/users/@self', cq)).json.id
  for (let index = 0; index < 20; index += 1) {
    const created = await child.client.request('POST', '/v1/time/timerecords', { ...cq, body: { user: { id: me2 }, project: { id: project }, duration: index } })
    t.equal(created.status, 201, created.text)
  }
  const removed = await child.client.request('DELETE', `/v1/time/projects/${project}`, cq)
  t.equal(removed.status, 200)
  await killHard(child)
  child = await spawnServer(crashDir)
  const deleted = (await child.client.request('GET', '/v1/time/timerecords/@deleted', cq)).json as unknown[]
  t.equal(deleted.length, 20, 'every time record of the project is in the trash')
  t.equal((await child.client.request('GET', '/v1/time/timerecords/$count', cq)).text, '0')
  await killHard(child)
})
