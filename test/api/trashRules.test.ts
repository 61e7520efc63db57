/*
 * The rules around the trash, over HTTP: a restore runs the unique checks
 * of create (and restores nothing of the group when one fails); a trash
 * item is seen exactly by whoever sees its deleted object, and restoring or
 * emptying it needs the right to delete that object; removing an object for
 * good also removes the records of its cascade trashed before it; and
 * `$metadata` lists TrashItem first in every REMOVE cascade.
 */
import t, { type Test } from 'tap'
import { activeActor, startInProcess, tempDataDir } from '../helpers/server.js'
import { addUser } from '../helpers/users.js'
import type { TestResponse } from '../helpers/http.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess(tempDataDir('trash-rules'))
t.teardown(() => server.stop())
const TENANT = 'rules'
const owner = await server.client.createTenant(TENANT)

type Query = Record<string, string | number | boolean>
const call = (token: string, method: string, path: string, query: Query = {}, body?: unknown): Promise<TestResponse> =>
  server.client.request(method, `/v1/${path}`, { tenant: TENANT, query: { token, ...query }, ...(body === undefined ? {} : { body }) })
const asOwner = (method: string, path: string, query: Query = {}, body?: unknown) => call(owner.token, method, path, query, body)

async function create(token: string, path: string, body: unknown): Promise<string> {
  const created = await call(token, 'POST', path, {}, body)
  if (created.status !== 201) throw new Error(`POST ${path}: ${created.status} ${created.text}`)
  return created.json.id as string
}

async function trash(token: string, path: string, id: string): Promise<string> {
  const removed = await call(token, 'DELETE', `${path}/${id}`)
  if (removed.status !== 200) throw new Error(`DELETE ${path}/${id}: ${removed.status} ${removed.text}`)
  return removed.json.trashItem.id as string
}

function refusedAsTaken(t: Test, answer: TestResponse, type: string, field: string): void {
  t.equal(answer.status, 412, answer.text)
  t.equal(answer.json?.code, 'TL01-1104')
  t.match(answer.json?.message, new RegExp(`${type}.*${field}`), 'the message names the field')
  t.match(answer.json?.constraintViolations, [{ entityType: type, field, constraint: 'Unique' }], 'the violation names the field')
}

const trashIds = async (token: string): Promise<string[]> => {
  const listed = await call(token, 'GET', 'trash', { $top: 1000 })
  if (listed.status !== 200) throw new Error(`GET trash: ${listed.status} ${listed.text}`)
  return (listed.json as { deletedObjectId: string }[]).map((item) => item.deletedObjectId)
}

t.test('restore refuses to break a unique field set and restores nothing of the group', async (t) => {
  const email = 'twin@rules.test'
  const first = await create(owner.token, 'users', { firstName: 'First', lastName: 'Twin', email, password: 'twin-password' })
  const access = await create(owner.token, 'accesses', { user: { id: first }, product: 'TIME' })
  const firstItem = await trash(owner.token, 'users', first)
  const second = await create(owner.token, 'users', { firstName: 'Second', lastName: 'Twin', email, password: 'twin-password' })

  refusedAsTaken(t, await asOwner('GET', `trash/${firstItem}/$restore`), 'User', 'email')
  t.equal((await asOwner('GET', `users/${first}/@deleted`)).status, 200, 'the user stays in the trash')
  t.equal((await asOwner('GET', `accesses/${access}/@deleted`)).status, 200, 'and so does its access, of the same group')
  t.equal((await asOwner('GET', `trash/${firstItem}`)).status, 200, 'the trash item is kept')
  const sameEmail = (await asOwner('GET', 'users', { $filter: `email eq '${email}'` })).json as unknown[]
  t.equal(sameEmail.length, 1, 'one live user with the e-mail')

  await trash(owner.token, 'users', second)
  const restored = await asOwner('GET', `trash/${firstItem}/$restore`)
  t.equal(restored.status, 200, 'restorable once the e-mail is free again')
  t.equal((await asOwner('GET', `accesses/${access}`)).status, 200, 'with its group')
})

t.test('a project member and a department member cannot be restored next to their twin', async (t) => {
  const user = await create(owner.token, 'users', { firstName: 'Member', lastName: 'Once', email: 'member@rules.test', password: 'member-password' })
  const project = await create(owner.token, 'time/projects', { name: 'Members' })
  const department = await create(owner.token, 'departments', { name: 'Members' })
  const cases = [
    { type: 'ProjectMember', path: `time/projects/${project}/members`, itemPath: 'time/projectmembers', field: 'project' },
    { type: 'DepartmentMember', path: `departments/${department}/members`, itemPath: 'departmentmembers', field: 'department' },
  ]
  for (const { type, path, itemPath, field } of cases) {
    const old = await create(owner.token, path, { user: { id: user } })
    const oldItem = await trash(owner.token, itemPath, old)
    const twin = await create(owner.token, path, { user: { id: user } })
    refusedAsTaken(t, await asOwner('GET', `trash/${oldItem}/$restore`), type, field)
    t.equal((await asOwner('GET', `${itemPath}/${old}/@deleted`)).status, 200, `the old ${type} stays in the trash`)
    t.equal((await asOwner('GET', `${itemPath}/${twin}`)).status, 200, `the new ${type} is untouched`)
  }
})

t.test('a trash item is visible exactly when its deleted object is', async (t) => {
  const plain = await addUser(server, TENANT, owner.token, 'Plain')
  const keeper = await addUser(server, TENANT, owner.token, 'Keeper')

  // A personal project of the plain user: only that user sees it, in the trash too.
  const personal = await create(plain.token, 'time/projects', { name: 'Mine', personal: true })
  const personalItem = await trash(plain.token, 'time/projects', personal)
  t.notOk((await trashIds(owner.token)).includes(personal), 'the owner does not see the trash item of another user’s personal project')
  for (const [method, path] of [
    ['GET', `trash/${personalItem}`],
    ['GET', `trash/${personalItem}/$restore`],
    ['DELETE', `trash/${personalItem}`],
  ] as const) {
    const answer = await asOwner(method, path)
    t.equal(answer.status, 404, `${method} ${path} is not found for the owner`)
  }
  t.equal((await asOwner('GET', 'trash/$count')).text, String((await trashIds(owner.token)).length), '$count agrees with the list')
  t.ok((await trashIds(plain.token)).includes(personal), 'the project’s owner sees its trash item')
  t.equal((await call(plain.token, 'GET', `trash/${personalItem}`)).status, 200)

  // A secret key of another user: only the key's user sees it, in the trash too; the owner and admins do not.
  const key = await call(keeper.token, 'POST', 'users/@self/secretkeys', {}, { name: 'laptop' })
  t.equal(key.status, 201, key.text)
  const keeperItem = await trash(owner.token, 'users', keeper.id)
  const groupItems = (await asOwner('GET', 'trash', { $filter: `groupId eq '${keeperItem}'` })).json as { id: string; deletedObjectId: string; deletedObjectType: string }[]
  t.ok(
    groupItems.some((item) => item.deletedObjectId === keeper.id),
    'the owner sees the trashed user',
  )
  t.notOk(
    groupItems.some((item) => item.deletedObjectType === 'SecretKey'),
    'the owner does not see the trashed secret key',
  )
  const keyItem = activeActor(server, TENANT)?.state.get('SecretKey', key.json.id)?.trashItem
  t.type(keyItem, 'string', 'the key went to the trash with its user')
  t.notOk((await trashIds(plain.token)).includes(key.json.id), 'a plain user does not see another user’s secret key in the trash')
  for (const token of [plain.token, owner.token]) {
    t.equal((await call(token, 'GET', `trash/${keyItem}`)).status, 404)
    t.equal((await call(token, 'GET', `trash/${keyItem}/$restore`)).status, 404)
    t.equal((await call(token, 'DELETE', `trash/${keyItem}`)).status, 404)
  }

  // The trashed user is visible to the plain user, but restoring or emptying needs the right to delete a user.
  t.ok((await trashIds(plain.token)).includes(keeper.id), 'a user in the trash is seen by everyone who sees users')
  for (const [method, path] of [
    ['GET', `trash/${keeperItem}/$restore`],
    ['DELETE', `trash/${keeperItem}`],
  ] as const) {
    const answer = await call(plain.token, method, path)
    t.equal(answer.status, 403, `${method} ${path}: ${answer.text}`)
    t.equal(answer.json?.code, 'TL01-1008')
  }
  t.equal((await asOwner('GET', `users/${keeper.id}/@deleted`)).status, 200, 'the refused calls changed nothing')
  t.equal((await asOwner('GET', `trash/${keeperItem}/$restore`)).status, 200, 'the owner may restore it')
})

t.test('emptying a parent’s trash item also removes its children trashed earlier', async (t) => {
  const project = await create(owner.token, 'time/projects', { name: 'Parent' })
  const task = await create(owner.token, `time/projects/${project}/tasks`, { name: 'child' })
  const taskItem = await trash(owner.token, 'time/tasks', task)
  const projectItem = await trash(owner.token, 'time/projects', project)
  t.equal((await asOwner('DELETE', `trash/${projectItem}`)).status, 200)
  t.equal((await asOwner('GET', `time/projects/${project}/@deleted`)).status, 404)
  t.equal((await asOwner('GET', `time/tasks/${task}/@deleted`)).status, 404, 'the task trashed before its project is gone too')
  t.equal((await asOwner('GET', `trash/${taskItem}`)).status, 404, 'with its trash item')
  t.equal((await asOwner('GET', `trash/${taskItem}/$restore`)).status, 404, 'so it cannot come back pointing at nothing')

  const live = await create(owner.token, 'time/projects', { name: 'Hard' })
  const trashedTask = await create(owner.token, `time/projects/${live}/tasks`, { name: 'trashed first' })
  const liveTask = await create(owner.token, `time/projects/${live}/tasks`, { name: 'live' })
  const trashedTaskItem = await trash(owner.token, 'time/tasks', trashedTask)
  t.equal((await asOwner('DELETE', `time/projects/${live}`, { hard: true })).status, 200)
  for (const id of [trashedTask, liveTask]) {
    t.equal((await asOwner('GET', `time/tasks/${id}`)).status, 404)
    t.equal((await asOwner('GET', `time/tasks/${id}/@deleted`)).status, 404, 'a hard delete takes trashed and live children')
  }
  t.equal((await asOwner('GET', `trash/${trashedTaskItem}`)).status, 404)
})

t.test('$metadata: every REMOVE cascade starts with TrashItem', async (t) => {
  const expected: Record<string, string[]> = {
    'time/projects': ['TrashItem', 'ProjectMember', 'ProjectWorkTypeLink', 'TimeRecord', 'Impulse', 'Task'],
    'billing/bills': ['TrashItem', 'BillItem', 'BillVat'],
    'time/clients': ['TrashItem', 'Bill', 'ContactPerson'],
    'time/worktypes': ['TrashItem', 'ProjectWorkTypeLink'],
    departments: ['TrashItem', 'DepartmentMember'],
    users: ['TrashItem', 'Access', 'ProjectMember', 'SecretKey', 'SpendingTimeUnit'],
    'time/tasks': ['TrashItem'],
    'time/timerecords': ['TrashItem'],
  }
  for (const [path, objectTypes] of Object.entries(expected)) {
    const metadata = await asOwner('GET', `${path}/$metadata`)
    // The REMOVE cascade only (a bill's PERSIST and MERGE cascades follow it: test/api/innerMetadata.test.ts).
    t.same(
      metadata.json.cascades.filter((cascade: { cascadeType: string }) => cascade.cascadeType === 'REMOVE'),
      [{ cascadeType: 'REMOVE', objectTypes }],
      path,
    )
  }
  t.same((await asOwner('GET', 'trash/$metadata')).json.cascades, [], 'a trash item has no trash item of its own')
})
