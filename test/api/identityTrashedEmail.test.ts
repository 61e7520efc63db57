/*
 * A user in the trash keeps their e-mail, and a new user may take it: login
 * and the public password-change request then name the live user, never
 * the trashed one (the trashed user's own password does not log in either).
 */
import t from 'tap'
import { startInProcess } from '../helpers/server.js'
import { basic, expectError, loginRaw, whoAmI } from '../helpers/identity.js'
import { requestConfirmationByMail } from '../helpers/mail.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const TENANT = 'reuse'
const owner = await client.createTenant(TENANT, 'owner@reuse.test', 'owner-password')
const EMAIL = 'sam@reuse.test'

const makeUser = async (password: string): Promise<string> => {
  const made = await client.request('POST', '/v1/users', { tenant: TENANT, query: { token: owner.token }, body: { firstName: 'Sam', lastName: 'Same', email: EMAIL, password } })
  if (made.status !== 201) throw new Error(`user create failed: ${made.status} ${made.text}`)
  return made.json.id as string
}

t.test('login and password change ignore a trashed user with the same e-mail', async (t) => {
  const oldId = await makeUser('old-password')
  t.equal((await loginRaw(client, TENANT, EMAIL, 'old-password')).status, 200, 'the first user logs in')
  t.equal((await client.request('DELETE', `/v1/users/${oldId}`, { tenant: TENANT, query: { token: owner.token } })).status, 200, 'to the trash')
  const newId = await makeUser('new-password')
  t.not(newId, oldId)

  const login = await loginRaw(client, TENANT, EMAIL, 'new-password')
  t.equal(login.status, 200, "the new user logs in although the trashed user's record comes first")
  const self = await whoAmI(client, TENANT, login.json.token as string)
  t.equal(self.json?.id, newId, 'as the new user')
  expectError(t, await loginRaw(client, TENANT, EMAIL, 'old-password'), 401, 'TL01-1001', "the trashed user's password")

  const id = await requestConfirmationByMail(client, server.dataDir, EMAIL)
  const changed = await client.request('POST', `/v1/auth/confirm/${id}`, { query: { apikey: client.apiKey }, headers: basic('', 'newer-password') })
  t.equal(changed.status, 200, 'the public request by e-mail made a confirmation that works (for the live user)')
  t.equal(changed.json?.id, newId, "it changed the new user's password")
  t.equal((await loginRaw(client, TENANT, EMAIL, 'newer-password')).status, 200, 'the new password logs in')
})
