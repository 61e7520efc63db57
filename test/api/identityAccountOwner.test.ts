/*
 * The account owner cannot be taken over or locked out: an admin may not
 * change the owner's User in any way (PUT, $set, password confirmation),
 * trash or delete it, or hand the account to someone; the owner may change
 * their own record but not deactivate, un-admin, trash or delete it, and
 * may hand the account only to an active admin. Every refusal is 403
 * TL01-1008 with a message that says why, and leaves the owner able to log
 * in with their token still working.
 */
import t, { type Test } from 'tap'
import { startInProcess } from '../helpers/server.js'
import { expectError, whoAmI } from '../helpers/identity.js'
import type { AnswerJson, TestResponse } from '../helpers/http.js'
import { addUser } from '../helpers/users.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const TENANT = 'realm'
const owner = await client.createTenant(TENANT, 'owner@realm.test', 'owner-password')
const ann = await addUser(server, TENANT, owner.token, 'Ann', { admin: true })
const pat = await addUser(server, TENANT, owner.token, 'Pat')

const call = (method: string, path: string, token: string, query: Record<string, unknown> = {}, body?: unknown): Promise<TestResponse> =>
  client.request(method, `/v1/${path}`, { tenant: TENANT, query: { token, ...query }, body })

async function ownerRecord(): Promise<Record<string, AnswerJson>> {
  const self = await call('GET', 'users/@self', owner.token)
  return self.json
}

function refused(t: Test, response: TestResponse, why: RegExp, label: string): void {
  expectError(t, response, 403, 'TL01-1008', label)
  t.match(response.json?.message, why, `${label}: the message says why`)
}

const ownerId = (await ownerRecord()).id as string

t.test('an admin cannot change, lock out, trash or delete the owner', async (t) => {
  const before = await ownerRecord()
  const onlyOwner = /only the account owner may change the account owner's User/
  refused(t, await call('PUT', `users/${ownerId}`, ann.token, {}, { active: false, version: before.version }), onlyOwner, 'PUT active=false')
  refused(t, await call('PUT', `users/${ownerId}`, ann.token, {}, { firstName: 'Mallory', version: before.version }), onlyOwner, 'PUT of another field')
  refused(t, await call('PUT', `users/${ownerId}`, ann.token, { version_ignore: true }, { password: 'taken-over-now' }), onlyOwner, 'PUT of the password')
  refused(t, await call('POST', `users/${ownerId}/$set`, ann.token, { active: false }), onlyOwner, '$set active=false')
  refused(t, await call('POST', `users/${ownerId}/$set`, ann.token, { admin: false }), onlyOwner, '$set admin=false')
  refused(t, await call('POST', `users/${ownerId}/$confirmation`, ann.token), onlyOwner, 'a password confirmation for the owner')
  const cannotDelete = /account owner's User cannot be deleted/
  refused(t, await call('DELETE', `users/${ownerId}`, ann.token), cannotDelete, 'DELETE (to the trash)')
  refused(t, await call('DELETE', `users/${ownerId}`, ann.token, { hard: true }), cannotDelete, 'DELETE hard')
  const batch = await call('POST', 'batch', ann.token, {}, [{ id: 'off', method: 'PUT', path: `/v1/users/${ownerId}?version_ignore=true`, body: JSON.stringify({ active: false }) }])
  t.equal(batch.json?.[0]?.code, 403, 'a batch item is refused the same way')

  const after = await ownerRecord()
  t.match(after, { version: before.version, active: true, admin: true, firstName: before.firstName }, 'the owner is unchanged')
  t.equal((await whoAmI(client, TENANT, owner.token)).status, 200, "the owner's token still works")
  t.equal((await client.login(TENANT, owner.email, owner.password)).length > 0, true, 'the owner still logs in with their own password')
})

t.test('the owner cannot deactivate, un-admin, trash or delete themself', async (t) => {
  const before = await ownerRecord()
  refused(t, await call('PUT', `users/${ownerId}`, owner.token, {}, { active: false, version: before.version }), /active must stay true/, 'PUT active=false')
  refused(t, await call('PUT', `users/${ownerId}`, owner.token, {}, { admin: false, version: before.version }), /admin must stay true/, 'PUT admin=false')
  refused(t, await call('POST', `users/${ownerId}/$set`, owner.token, { active: false }), /active must stay true/, '$set active=false')
  refused(t, await call('POST', `users/${ownerId}/$set`, owner.token, { admin: false }), /admin must stay true/, '$set admin=false')
  refused(t, await call('DELETE', `users/${ownerId}`, owner.token), /cannot be deleted/, 'DELETE (to the trash)')
  refused(t, await call('DELETE', `users/${ownerId}`, owner.token, { hard: true }), /cannot be deleted/, 'DELETE hard')
  t.match(await ownerRecord(), { version: before.version, active: true, admin: true }, 'nothing changed')

  const renamed = await call('PUT', `users/${ownerId}`, owner.token, { response_object: true }, { firstName: 'Olivia', projectManager: true, version: before.version })
  t.equal(renamed.status, 200, 'the owner changes the rest of their own record')
  t.match(renamed.json, { firstName: 'Olivia', projectManager: true, active: true, admin: true })
  t.equal((await call('POST', 'users/@self/$confirmation', owner.token, {}, { currentPassword: 'owner-password' })).status, 201, 'and asks for their own password change')
})

t.test('admins still manage everyone else', async (t) => {
  t.equal((await call('POST', `users/${pat.id}/$set`, ann.token, { active: false })).status, 200, 'an admin deactivates a user')
  t.equal((await call('POST', `users/${pat.id}/$set`, ann.token, { active: true })).status, 200, 'and activates them again')
  t.equal((await call('POST', `users/${pat.id}/$confirmation`, ann.token)).status, 202, "an admin asks for a user's password change (the id goes to the user by mail)")
  t.equal((await call('POST', `users/${ann.id}/$set`, owner.token, { projectManager: true })).status, 200, "the owner changes an admin's record")
})

t.test('only the owner hands the account on, and only to an active admin', async (t) => {
  const account = (await call('GET', 'accounts/@own', owner.token)).json
  refused(
    t,
    await call('PUT', `accounts/${account.id}`, ann.token, {}, { owner: { id: ann.id }, version: account.version }),
    /only the account owner may hand the account/,
    'an admin makes themself the owner',
  )
  refused(t, await call('PUT', `accounts/${account.id}`, owner.token, {}, { owner: { id: pat.id }, version: account.version }), /only to an active admin/, 'to a user who is not an admin')
  t.equal((await call('PUT', `accounts/${account.id}`, ann.token, {}, { name: 'Realm Inc', version: account.version })).status, 200, 'an admin still changes the rest of the account')

  const current = (await call('GET', 'accounts/@own', owner.token)).json
  const handed = await call('PUT', `accounts/${account.id}`, owner.token, { response_object: true }, { owner: { id: ann.id }, version: current.version })
  t.equal(handed.status, 200, 'the owner hands the account to an admin')
  t.equal(handed.json.owner.id, ann.id)
  refused(t, await call('POST', `users/${ann.id}/$set`, owner.token, { active: false }), /only the account owner may change/, "the former owner cannot touch the new owner's record")
  refused(t, await call('DELETE', `users/${ann.id}`, ann.token), /cannot be deleted/, 'the new owner cannot delete themself')
  t.equal((await call('POST', `users/${ownerId}/$set`, ann.token, { phone: '555' })).status, 200, 'the former owner is a plain admin now')
})
