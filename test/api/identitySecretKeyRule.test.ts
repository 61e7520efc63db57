/*
 * Who may do what with a secret key (SecretKey's declaration, policy.ts):
 * a user's keys are read and changed by that user only; the owner and
 * admins see none of them (lists, counts, reads, the trash) and change
 * none (PUT, $set, a batch item: 404, as for any object they cannot see).
 * An admin may revoke — delete — the keys of a user they may manage, never
 * the owner's; the owner may revoke anyone's. A delete is for good: a
 * revoked key never waits in the trash. Before, an admin listed the
 * owner's keys and expired, renamed, re-enabled and hard-deleted them.
 */
import t, { type Test } from 'tap'
import { api, type Api } from '../helpers/api.js'
import { loginRaw, whoAmI } from '../helpers/identity.js'
import { startInProcess } from '../helpers/server.js'
import { addUser } from '../helpers/users.js'

const TENANT = 'keyrule'
const server = await startInProcess()
t.teardown(() => server.stop())
const owner = await server.client.createTenant(TENANT)
const ownerApi = api(server.client, TENANT, owner.token)
const ownerId = (await ownerApi.get('users/@self')).json.id as string
const admin = await addUser(server, TENANT, owner.token, 'Ada', { admin: true })
const adminApi = api(server.client, TENANT, admin.token)
const plain = await addUser(server, TENANT, owner.token, 'Pat')
const plainApi = api(server.client, TENANT, plain.token)

async function makeKey(maker: Api, name: string): Promise<{ id: string; text: string }> {
  const made = await maker.post('users/@self/secretkeys', { name })
  if (made.status !== 201) throw new Error(`the key was not made: ${made.status} ${made.text}`)
  return { id: made.json.id as string, text: made.json.secretKey as string }
}

/** Who the key's text logs in, or null. */
async function whoLogsIn(text: string): Promise<string | null> {
  const login = await loginRaw(server.client, TENANT, text, '')
  if (login.status !== 200) return null
  return (await whoAmI(server.client, TENANT, login.json.token)).json.id as string
}

/** Every way a caller might read or change someone else's key; each must answer 404. */
async function expectNoAccess(t: Test, caller: Api, key: { id: string }, label: string): Promise<void> {
  t.notOk((await caller.ids('secretkeys')).includes(key.id), `${label}: not in the list`)
  t.notOk((await caller.ids('secretkeys', { $filter: `id eq '${key.id}'` })).includes(key.id), `${label}: not found by a filter`)
  t.equal((await caller.get('secretkeys/$count', { $filter: `id eq '${key.id}'` })).text, '0', `${label}: not counted`)
  const attempts: [string, Promise<{ status: number }>][] = [
    ['read', caller.get(`secretkeys/${key.id}`)],
    ['expire', caller.put(`secretkeys/${key.id}`, { expiration: '2020-01-01T00:00:00Z' }, { version_ignore: true })],
    ['rename', caller.put(`secretkeys/${key.id}`, { name: 'renamed' }, { version_ignore: true })],
    ['re-enable', caller.put(`secretkeys/${key.id}`, { expiration: null }, { version_ignore: true })],
    ['$set', caller.post(`secretkeys/${key.id}/$set`, undefined, { name: 'set' })],
    [
      'batch PUT',
      caller
        .post('batch', [{ id: 'b', method: 'PUT', path: `/v1/secretkeys/${key.id}?version_ignore=true`, body: JSON.stringify({ name: 'batched' }) }])
        .then((answer) => ({ status: (answer.json as { code: number }[])[0]?.code ?? 0 })),
    ],
  ]
  for (const [what, attempt] of attempts) t.equal((await attempt).status, 404, `${label}: ${what} is 404`)
}

t.test("the owner's keys: an admin neither reads, changes nor deletes them", async (t) => {
  const key = await makeKey(ownerApi, 'owner laptop')
  await expectNoAccess(t, adminApi, key, 'admin')
  t.equal((await adminApi.del(`secretkeys/${key.id}`)).status, 404, 'admin DELETE: 404')
  t.equal((await adminApi.del(`secretkeys/${key.id}`, { hard: true })).status, 404, 'admin DELETE ?hard=true: 404')
  const after = await ownerApi.get(`secretkeys/${key.id}`)
  t.equal(after.status, 200)
  t.match(after.json, { name: 'owner laptop', expiration: null, version: 1 }, 'the key is as the owner made it')
  t.equal(await whoLogsIn(key.text), ownerId, 'and still logs the owner in')
})

t.test("a user's keys: the owner and admins do not read or change them; both may revoke them, for good", async (t) => {
  const first = await makeKey(plainApi, 'pat phone')
  const second = await makeKey(plainApi, 'pat tablet')
  await expectNoAccess(t, adminApi, first, 'admin')
  await expectNoAccess(t, ownerApi, first, 'owner')
  const revoked = await adminApi.del(`secretkeys/${first.id}`)
  t.equal(revoked.status, 200, revoked.text)
  t.same(revoked.json, { id: first.id, deleted: true }, 'removed, not trashed')
  t.equal(await whoLogsIn(first.text), null, 'the revoked key logs nobody in')
  t.equal((await ownerApi.del(`secretkeys/${second.id}`, { hard: true })).status, 200, 'the owner revokes too')
  t.equal(await whoLogsIn(second.text), null)
  t.same(await plainApi.ids('secretkeys'), [], 'the user has no key left')
  t.same(await plainApi.ids('secretkeys/@deleted'), [], 'and none in the trash to restore')
})

t.test("an admin's keys: another admin and the owner may revoke them, not read them", async (t) => {
  const other = await addUser(server, TENANT, owner.token, 'Ben', { admin: true })
  const otherApi = api(server.client, TENANT, other.token)
  const key = await makeKey(adminApi, 'ada key')
  await expectNoAccess(t, otherApi, key, 'another admin')
  t.equal((await otherApi.del(`secretkeys/${key.id}`)).status, 200, 'another admin revokes it')
  t.equal(await whoLogsIn(key.text), null)
})

t.test('a user manages their own keys, and a delete is for good', async (t) => {
  const key = await makeKey(plainApi, 'own')
  const renamed = await plainApi.put(`secretkeys/${key.id}`, { name: 'own, renamed', expiration: '2099-01-01T00:00:00Z' }, { version_ignore: true })
  t.equal(renamed.status, 200, renamed.text)
  t.equal((await plainApi.get(`secretkeys/${key.id}`)).json.name, 'own, renamed')
  t.same((await plainApi.del(`secretkeys/${key.id}`)).json, { id: key.id, deleted: true })
  t.same(await plainApi.ids('secretkeys/@deleted'), [], 'not in the trash')
  t.equal(await whoLogsIn(key.text), null)
  t.equal((await plainApi.del(`secretkeys/${key.id}`)).status, 404, 'gone')
})

t.test("a plain user cannot revoke another user's key", async (t) => {
  const key = await makeKey(adminApi, 'ada second')
  t.equal((await plainApi.del(`secretkeys/${key.id}`)).status, 404)
  t.equal(await whoLogsIn(key.text), admin.id)
})
