/*
 * The permission matrix of resources.md over HTTP, one row per resource
 * family (its WriteRule): who may create, change and read. Roles: the
 * account owner, an admin, a project manager, a plain user, and a plain
 * user who owns a personal project. Also: users made by a superuser are
 * confirmed at once and can log in.
 */
import t, { type Test } from 'tap'
import { api, newUser, ref, type Api } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'
import type { TestResponse } from '../helpers/http.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = api(client, 'perm', (await client.createTenant('perm')).token)
const ownerId = (await owner.get('users/@self')).json.id as string
const admin = await newUser(client, 'perm', owner, 'Ada', { admin: true })
const manager = await newUser(client, 'perm', owner, 'Pam', { projectManager: true })
const plain = await newUser(client, 'perm', owner, 'Paul')
const pete = await newUser(client, 'perm', owner, 'Pete')

const ownersProject = await owner.create('time/projects', { name: 'Owned by the owner' })
const plainsProject = await plain.api.create('time/projects', { name: 'Owned by Paul' })
const managersProject = await manager.api.create('time/projects', { name: 'Owned by Pam' })
const personal = await pete.api.create('time/projects', { name: 'Pete only', personal: true })
const workType = await owner.create('time/worktypes', { name: 'Any' })
const department = await owner.create('departments', { name: 'Dept' })
// Memberships and links are unique per pair: every creation in the matrix takes a fresh user or work type.
const spareUsers: string[] = []
const spareWorkTypes: string[] = []
for (let index = 0; index < 8; index += 1) {
  spareUsers.push(await owner.create('users', { firstName: `Spare${index}`, email: `spare${index}@perm.test`, password: 'spare-password' }))
  spareWorkTypes.push(await owner.create('time/worktypes', { name: `Spare ${index}` }))
}
let spareIndex = 0
const nextUser = () => spareUsers[spareIndex++ % spareUsers.length] as string
const nextWorkType = () => spareWorkTypes[spareIndex++ % spareWorkTypes.length] as string
const bill = await owner.create('billing/bills', { description: 'bill' })

type Role = 'owner' | 'admin' | 'manager' | 'plain'
const ROLES: Record<Role, Api> = { owner, admin: admin.api, manager: manager.api, plain: plain.api }

function expectStatus(t: Test, response: TestResponse, status: number, label: string): void {
  t.equal(response.status, status, `${label}: ${status}${response.status === status ? '' : ` (${response.text.slice(0, 200)})`}`)
}

interface Family {
  rule: string
  path: string
  body: () => Record<string, unknown>
  update: Record<string, unknown>
  /** Create and update status per role (of an object the owner made). */
  allowed: Record<Role, boolean>
}

const SUPERUSER: Record<Role, boolean> = { owner: true, admin: true, manager: false, plain: false }
const MANAGER: Record<Role, boolean> = { owner: true, admin: true, manager: true, plain: false }

const FAMILIES: Family[] = [
  { rule: 'superuser', path: 'accesses', body: () => ({ user: ref(plain.id), product: 'CORE' }), update: { product: 'TIME' }, allowed: SUPERUSER },
  { rule: 'superuser', path: 'billing/pricelists/time', body: () => ({ price: 10 }), update: { price: 11 }, allowed: SUPERUSER },
  { rule: 'superuser', path: 'billing/bills', body: () => ({ description: 'b' }), update: { notes: 'n' }, allowed: SUPERUSER },
  { rule: 'superuser', path: 'billing/billitems', body: () => ({ bill: ref(bill), quantity: 1 }), update: { quantity: 2 }, allowed: SUPERUSER },
  { rule: 'superuser', path: 'billing/billvats', body: () => ({ bill: ref(bill), vatRate: 5 }), update: { vatPrice: 1 }, allowed: SUPERUSER },
  { rule: 'superuser', path: 'departments', body: () => ({ name: 'd' }), update: { name: 'e' }, allowed: SUPERUSER },
  { rule: 'superuser', path: 'departmentmembers', body: () => ({ department: ref(department), user: ref(nextUser()) }), update: { user: ref(ownerId) }, allowed: SUPERUSER },
  { rule: 'projectManager', path: 'time/worktypes', body: () => ({ name: 'w' }), update: { name: 'x' }, allowed: MANAGER },
  { rule: 'projectManager', path: 'time/contacts', body: () => ({ lastName: 'c' }), update: { firstName: 'f' }, allowed: MANAGER },
  { rule: 'projectManager', path: 'time/clients', body: () => ({ name: 'c' }), update: { name: 'd' }, allowed: MANAGER },
  { rule: 'projectOwner', path: 'time/tasks', body: () => ({ name: 't', project: ref(ownersProject) }), update: { done: true }, allowed: MANAGER },
  { rule: 'projectOwner', path: 'time/projectmembers', body: () => ({ user: ref(nextUser()), project: ref(ownersProject) }), update: { user: ref(ownerId) }, allowed: MANAGER },
  { rule: 'projectOwner', path: 'time/projectworktypelinks', body: () => ({ workType: ref(nextWorkType()), project: ref(ownersProject) }), update: { workType: ref(workType) }, allowed: MANAGER },
  { rule: 'projectOwner', path: 'time/projects', body: () => ({ name: 'p', owner: ref(ownerId) }), update: { note: 'n' }, allowed: MANAGER },
  { rule: 'ownRecord', path: 'time/timerecords', body: () => ({ user: ref(ownerId), duration: 1 }), update: { duration: 2 }, allowed: SUPERUSER },
  { rule: 'ownRecord', path: 'time/impulses', body: () => ({ user: ref(ownerId), mode: 'PAUSE' }), update: { description: 'd' }, allowed: SUPERUSER },
  { rule: 'ownRecord', path: 'spendingtime', body: () => ({ user: ref(ownerId), duration: 1 }), update: { duration: 2 }, allowed: SUPERUSER },
]

for (const family of FAMILIES) {
  t.test(`${family.rule}: ${family.path}`, async (t) => {
    const made = await owner.create(family.path, family.body())
    for (const [role, caller] of Object.entries(ROLES) as [Role, Api][]) {
      const status = family.allowed[role] ? 201 : 403
      expectStatus(t, await caller.post(family.path, family.body()), status, `${role} creates`)
      expectStatus(t, await caller.put(`${family.path}/${made}`, family.update, { version_ignore: true }), family.allowed[role] ? 200 : 403, `${role} changes`)
      expectStatus(t, await caller.get(`${family.path}/${made}`), 200, `${role} reads`)
      const listed = await caller.get(family.path)
      t.ok(listed.status === 200 && listed.json.some((rec: { id: string }) => rec.id === made), `${role} lists`)
    }
    expectStatus(t, await plain.api.del(`${family.path}/${made}`), family.allowed.plain ? 200 : 403, 'plain deletes')
    expectStatus(t, await admin.api.del(`${family.path}/${made}`), 200, 'admin deletes')
  })
}

t.test('projectOwner: the owner of a project writes its tasks, members and links', async (t) => {
  expectStatus(t, await plain.api.post('time/tasks', { name: 'mine', project: ref(plainsProject) }), 201, 'task in own project')
  expectStatus(t, await plain.api.post(`time/projects/${plainsProject}/members`, { user: ref(pete.id) }), 201, 'member of own project')
  expectStatus(t, await plain.api.post(`time/projects/${plainsProject}/worktypelinks`, { workType: ref(workType) }), 201, 'link of own project')
  expectStatus(t, await plain.api.post('time/projects', { name: 'for someone else', owner: ref(ownerId) }), 403, 'a project owned by another')
  const task = await plain.api.create('time/tasks', { name: 'moving', project: ref(plainsProject) })
  expectStatus(t, await plain.api.put(`time/tasks/${task}`, { project: ref(ownersProject) }, { version_ignore: true }), 403, "moving a task into another's project")
  expectStatus(t, await pete.api.put(`time/projects/${plainsProject}`, { note: 'x' }, { version_ignore: true }), 403, "another user's project")
})

t.test("ownRecord: a user's own records, and a project manager on their own project", async (t) => {
  expectStatus(t, await plain.api.post('time/timerecords', { duration: 1 }), 201, 'own record (user defaults to the caller)')
  const own = await plain.api.create('time/impulses', { mode: 'PAUSE' })
  expectStatus(t, await plain.api.put(`time/impulses/${own}`, { description: 'x' }, { version_ignore: true }), 200, 'own impulse')
  expectStatus(t, await plain.api.put(`time/impulses/${own}`, { user: ref(pete.id) }, { version_ignore: true }), 403, 'giving it to another user')
  expectStatus(t, await plain.api.post('spendingtime', { duration: 5 }), 201, 'own spending time')
  expectStatus(t, await plain.api.post('spendingtime', { duration: 5, user: ref(pete.id) }), 403, "another's spending time")
  expectStatus(t, await plain.api.post('secretkeys', { name: 'k' }), 201, 'own secret key')
  expectStatus(t, await plain.api.post('secretkeys', { name: 'k', user: ref(pete.id) }), 403, "another's secret key")
  expectStatus(t, await manager.api.post('time/timerecords', { user: ref(plain.id), project: ref(managersProject), duration: 1 }), 201, "a manager on their project: another's record")
  expectStatus(t, await manager.api.post('time/timerecords', { user: ref(plain.id), project: ref(ownersProject), duration: 1 }), 403, "a manager on another's project")
  expectStatus(t, await manager.api.post('time/timerecords', { user: ref(plain.id), duration: 1 }), 403, 'a manager, no project')
  expectStatus(t, await admin.api.post('time/timerecords', { user: ref(plain.id), duration: 1 }), 201, 'an admin, anyone')
})

t.test('self: users change their own User object, not their rights', async (t) => {
  expectStatus(t, await plain.api.put(`users/${plain.id}`, { phone: '123' }, { version_ignore: true }), 200, 'own phone')
  expectStatus(t, await plain.api.put(`users/${plain.id}`, { admin: true }, { version_ignore: true }), 403, 'own admin flag')
  expectStatus(t, await plain.api.put(`users/${plain.id}`, { projectManager: true }, { version_ignore: true }), 403, 'own projectManager flag')
  expectStatus(t, await plain.api.put(`users/${pete.id}`, { phone: '1' }, { version_ignore: true }), 403, 'another user')
  expectStatus(t, await plain.api.del(`users/${plain.id}`), 403, 'deleting oneself')
  expectStatus(t, await plain.api.post('users', { email: 'x@perm.test', password: 'long-enough' }), 403, 'creating users')
  expectStatus(t, await admin.api.put(`users/${plain.id}`, { position: 'dev' }, { version_ignore: true }), 200, 'an admin changes anyone')
  const account = (await owner.get('accounts/@own')).json.id as string
  expectStatus(t, await plain.api.put(`accounts/${account}`, { phone: '1' }, { version_ignore: true }), 403, 'plain changes the account')
  expectStatus(t, await admin.api.put(`accounts/${account}`, { phone: '1' }, { version_ignore: true }), 200, 'admin changes the account')
  expectStatus(t, await plain.api.get(`accounts/${account}`), 200, 'plain reads the account')
})

t.test('users made by a superuser are confirmed and log in', async (t) => {
  const byAdmin = await admin.api.post('users', { firstName: 'New', lastName: 'Hire', email: 'hire@perm.test', password: 'hire-password' }, { response_object: true })
  t.equal(byAdmin.status, 201, byAdmin.text)
  t.equal(byAdmin.json.confirmed, true)
  t.type(await client.login('perm', 'hire@perm.test', 'hire-password'), 'string')
  t.equal((await owner.get(`users/${plain.id}`)).json.confirmed, true)
})

t.test('a personal project is visible only to its owner, with everything in it', async (t) => {
  const task = await pete.api.create('time/tasks', { name: 'secret task', project: ref(personal) })
  const record = await pete.api.create('time/timerecords', { project: ref(personal), duration: 5 })
  await pete.api.create(`time/projects/${personal}/members`, { user: ref(pete.id) })
  expectStatus(t, await pete.api.get(`time/projects/${personal}`), 200, 'its owner reads it')
  expectStatus(t, await pete.api.put(`time/projects/${personal}`, { note: 'mine' }, { version_ignore: true }), 200, 'its owner changes it')
  for (const [role, caller] of Object.entries(ROLES) as [Role, Api][]) {
    expectStatus(t, await caller.get(`time/projects/${personal}`), 404, `${role} reads it`)
    expectStatus(t, await caller.get(`time/tasks/${task}`), 404, `${role} reads its task`)
    expectStatus(t, await caller.get(`time/timerecords/${record}`), 404, `${role} reads its record`)
    expectStatus(t, await caller.put(`time/projects/${personal}`, { note: 'x' }, { version_ignore: true }), 404, `${role} changes it`)
    expectStatus(t, await caller.post('time/tasks', { name: 'x', project: ref(personal) }), 403, `${role} adds a task`)
    expectStatus(t, await caller.get(`time/projects/${personal}/tasks`), 404, `${role} lists its tasks`)
    t.notOk((await caller.ids('time/tasks')).includes(task), `${role}: not in task lists`)
    t.equal((await caller.get('time/projectmembers/$count', { $filter: `project/id eq '${personal}'` })).text, '0', `${role}: its members are not counted`)
  }
})
