/*
 * Locked periods (time/locks, issue 26): time records and expenses dated
 * before the lock date that applies to their user — the account's lock
 * or the user's own, the later of them — cannot be created, changed,
 * deleted, restored or emptied from the trash except by admins (412
 * TL01-1106 with a message naming the lock); records after it are
 * untouched, and removing the lock unlocks the period.
 */
import t from 'tap'
import { api, ref } from '../helpers/api.js'
import { expectError } from '../helpers/identity.js'
import { startInProcess, type InProcessServer } from '../helpers/server.js'
import { addUser } from '../helpers/users.js'

const server: InProcessServer = await startInProcess()
t.teardown(() => server.stop())
const owner = await server.client.createTenant('locks')
const ownerApi = api(server.client, 'locks', owner.token)
const bob = await addUser(server, 'locks', owner.token, 'Bob')
const bobApi = api(server.client, 'locks', bob.token)
const carol = await addUser(server, 'locks', owner.token, 'Carol')
const carolApi = api(server.client, 'locks', carol.token)
const project = await ownerApi.create('time/projects', { name: 'Locked work' })
const travel = await ownerApi.create('time/expenseTypes', { name: 'Travel', unit: 'km', unitPrice: 0.5 })

const record = (day: string) => ({ start: `${day}T08:00:00Z`, stop: `${day}T09:00:00Z`, duration: 3_600_000, project: ref(project) })
const expense = (day: string) => ({ date: `${day}T00:00:00Z`, project: ref(project), expenseType: ref(travel), quantity: 10 })

t.test('locks are declared like every resource', async (t) => {
  const metadata = await ownerApi.get('time/locks/$metadata')
  t.equal(metadata.status, 200, metadata.text)
  t.same((metadata.json.fields as { name: string }[]).map((field) => field.name).slice(-3), ['lockDate', 'user', 'note'])
  expectError(t, await bobApi.post('time/locks', { lockDate: '2026-01-01T00:00:00Z' }), 403, 'TL01-1008', 'only admins lock')
  expectError(t, await ownerApi.post('time/locks', { note: 'no date' }), 412, 'TL01-1104', 'a lock needs its date')
})

t.test('the account lock refuses writes before it to users, not to admins', async (t) => {
  const before = await bobApi.create('time/timerecords', record('2026-01-10'))
  const beforeExpense = await bobApi.create('time/expenses', expense('2026-01-10'))
  const lock = await ownerApi.create('time/locks', { lockDate: '2026-02-01T00:00:00Z', note: 'January closed' })

  const created = await bobApi.post('time/timerecords', record('2026-01-20'))
  expectError(t, created, 412, 'TL01-1106', 'create before the lock')
  t.match(created.json.message, /locked.*2026-02-01/, 'the message names the lock date')
  expectError(t, await bobApi.post('time/expenses', expense('2026-01-20')), 412, 'TL01-1106', 'an expense too')
  expectError(t, await bobApi.put(`time/timerecords/${before}`, { description: 'late' }, { version_ignore: true }), 412, 'TL01-1106', 'change')
  expectError(t, await bobApi.post(`time/timerecords/${before}/$set`, undefined, { description: 'late' }), 412, 'TL01-1106', '$set')
  expectError(t, await bobApi.del(`time/timerecords/${before}`), 412, 'TL01-1106', 'delete')
  expectError(t, await bobApi.del(`time/expenses/${beforeExpense}`), 412, 'TL01-1106', 'delete an expense')

  const after = await bobApi.create('time/timerecords', record('2026-02-03'))
  expectError(
    t,
    await bobApi.put(`time/timerecords/${after}`, { start: '2026-01-30T08:00:00Z', stop: '2026-01-30T09:00:00Z' }, { version_ignore: true }),
    412,
    'TL01-1106',
    'moving a record into the locked period',
  )
  t.equal((await bobApi.put(`time/timerecords/${after}`, { description: 'fine' }, { version_ignore: true })).status, 200, 'after the lock date all is open')

  t.equal((await ownerApi.put(`time/timerecords/${before}`, { description: 'by the admin' }, { version_ignore: true })).status, 200, 'an admin changes a locked record')
  t.equal((await ownerApi.post('time/timerecords', { ...record('2026-01-21'), user: ref(bob.id) })).status, 201, 'and creates one')

  t.equal((await ownerApi.del(`time/locks/${lock}`)).status, 200, 'the lock is removed')
  t.equal((await bobApi.put(`time/timerecords/${before}`, { description: 'unlocked' }, { version_ignore: true })).status, 200, 'the period is open again')
})

t.test('a user lock applies to that user only; the later lock wins', async (t) => {
  const bobsLock = await ownerApi.create('time/locks', { lockDate: '2026-03-01T00:00:00Z', user: ref(bob.id) })
  expectError(t, await bobApi.post('time/timerecords', record('2026-02-20')), 412, 'TL01-1106', "Bob's own lock")
  t.equal((await carolApi.post('time/timerecords', record('2026-02-20'))).status, 201, 'Carol is not locked')
  await ownerApi.create('time/locks', { lockDate: '2026-02-15T00:00:00Z' })
  expectError(t, await carolApi.post('time/timerecords', record('2026-02-10')), 412, 'TL01-1106', 'the account lock applies to Carol')
  expectError(t, await bobApi.post('time/timerecords', record('2026-02-20')), 412, 'TL01-1106', "Bob's later lock still applies")
  const listed = await ownerApi.get('time/locks', { $filter: `user/id eq '${bob.id}'` })
  t.same(
    listed.json.map((lock: { id: string }) => lock.id),
    [bobsLock],
    'locks filter like every list',
  )
})

t.test('the trash keeps a locked record locked', async (t) => {
  const open = await carolApi.create('time/timerecords', record('2026-05-05'))
  const deleted = await carolApi.del(`time/timerecords/${open}`)
  t.equal(deleted.status, 200, deleted.text)
  const item = deleted.json.trashItem.id as string
  await ownerApi.create('time/locks', { lockDate: '2026-06-01T00:00:00Z', user: ref(carol.id) })
  expectError(t, await carolApi.get(`trash/${item}/$restore`), 412, 'TL01-1106', 'no restore into a locked period')
  expectError(t, await carolApi.del(`trash/${item}`), 412, 'TL01-1106', 'nor emptying it')
  t.equal((await ownerApi.get(`trash/${item}/$restore`)).status, 200, 'an admin restores it')
})
