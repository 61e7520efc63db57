/*
 * Secret keys are made by the server, for the caller only. An admin once
 * took over the account owner: the generic `POST /secretkeys` took a
 * caller-chosen `id` and `user`, and a key's id was derived from its text,
 * so a key "for the owner" with a text of the admin's choosing logged in
 * as the owner. Now the id is a random version-4 UUID independent of the
 * text, the text is never chosen nor stored, `user` is the caller and
 * stays so, and login finds a key only by the hash of a text the server
 * made. The keys keep working after a restart.
 */
import crypto from 'node:crypto'
import t from 'tap'
import { api } from '../helpers/api.js'
import { expectError, loginRaw, whoAmI } from '../helpers/identity.js'
import { startInProcess, type InProcessServer } from '../helpers/server.js'
import { addUser } from '../helpers/users.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The id a key's text gave its record before: the first 128 bits of its SHA-256 as a UUID. */
function derivedId(text: string): string {
  const hex = crypto.createHash('sha256').update(text).digest('hex').slice(0, 32)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

let server: InProcessServer = await startInProcess()
t.teardown(() => server.stop())
const owner = await server.client.createTenant('keys')
const ownerApi = api(server.client, 'keys', owner.token)
const ownerId = (await ownerApi.get('users/@self')).json.id as string
const admin = await addUser(server, 'keys', owner.token, 'Ada', { admin: true })
const adminApi = api(server.client, 'keys', admin.token)

const whoLogsIn = async (text: string): Promise<string | null> => {
  const login = await loginRaw(server.client, 'keys', text, '')
  if (login.status !== 200) return null
  return (await whoAmI(server.client, 'keys', login.json.token)).json.id as string
}

t.test('an admin cannot make a key for the owner, nor choose its id or text', async (t) => {
  const chosen = 'chosen-by-the-admin-0123456789abcdefghijklm'
  const forOwner = await adminApi.post('secretkeys', { id: derivedId(chosen), user: { id: ownerId }, name: 'takeover' })
  t.equal(forOwner.status, 400, 'an id is never chosen')
  expectError(t, await adminApi.post('secretkeys', { user: { id: ownerId }, name: 'takeover' }), 403, 'TL01-1008', 'a key for another user')
  expectError(t, await adminApi.post('users/@self/secretkeys', { user: { id: ownerId } }), 403, 'TL01-1008', 'the @self path too')
  expectError(t, await adminApi.post('secretkeys', { secretKey: chosen }), 400, 'TL01-1105', 'the text is never chosen')
  expectError(t, await adminApi.post('secretkeys', { id: derivedId(chosen) }), 400, 'TL01-1105', 'nor the id alone')
  t.equal(await whoLogsIn(chosen), null, 'the chosen text logs nobody in')
  t.same(await ownerApi.ids('users/@self/secretkeys'), [], 'the owner has no key')
})

t.test('a key is made for the caller, with a random id that says nothing of its text', async (t) => {
  for (const path of ['secretkeys', 'users/@self/secretkeys']) {
    const made = await adminApi.post(path, { name: `by ${path}`, user: { id: admin.id } })
    t.equal(made.status, 201, made.text)
    t.match(made.json.id, UUID_V4, 'a version-4 UUID')
    t.not(made.json.id, derivedId(made.json.secretKey), 'not derived from the text')
    t.equal(made.json.user.id, admin.id)
    t.notOk('keyHash' in made.json, 'the hash is never shown')
    t.equal(await whoLogsIn(made.json.secretKey), admin.id, 'it logs its maker in')
  }
})

t.test('a key cannot be handed to another user', async (t) => {
  const made = await adminApi.post('users/@self/secretkeys', { name: 'mine' })
  const moved = await adminApi.put(`secretkeys/${made.json.id}`, { user: { id: ownerId }, keyHash: 'x', name: 'renamed' }, { version_ignore: true })
  t.equal(moved.status, 200, moved.text)
  const after = await adminApi.get(`secretkeys/${made.json.id}`)
  t.equal(after.json.user.id, admin.id, 'the user stays the maker')
  t.equal(after.json.name, 'renamed')
  expectError(t, await adminApi.post(`secretkeys/${made.json.id}/$set`, undefined, { user: ownerId }), 400, 'TL01-1105', '$set of the user')
  t.equal(await whoLogsIn(made.json.secretKey), admin.id, 'the key still logs in its maker, not the owner')
})

t.test('the hash is no field for clients', async (t) => {
  const metadata = await adminApi.get('secretkeys/$metadata')
  t.notOk(
    (metadata.json.fields as { name: string }[]).some((field) => field.name === 'keyHash'),
    'not in $metadata',
  )
  expectError(t, await adminApi.get('secretkeys', { $filter: "keyHash eq 'x'" }), 400, 'TL01-1105', 'not filterable')
  expectError(t, await adminApi.get('secretkeys', { $orderby: 'keyHash' }), 400, 'TL01-1105', 'not sortable')
  expectError(t, await adminApi.post(`secretkeys/${(await adminApi.ids('secretkeys'))[0]}/$set`, undefined, { keyHash: 'x' }), 400, 'TL01-1105', 'not settable')
})

t.test('keys log in after a restart (the hash index is rebuilt)', async (t) => {
  const made = await ownerApi.post('users/@self/secretkeys', { name: 'survivor' })
  const dataDir = server.dataDir
  await server.stop()
  server = await startInProcess(dataDir)
  t.equal(await whoLogsIn(made.json.secretKey), ownerId)
})
