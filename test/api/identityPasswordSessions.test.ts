/*
 * Every password change ends the user's other sessions, whatever path it
 * takes: a PUT of the user's own password (with the current one,
 * `currentPassword`) keeps the session that made it
 * (its access token and refresh token) and ends every other token of the
 * user; an admin's PUT ends all of them (the admin's own session is not the
 * user's); a batch item does the same; a pending password confirmation
 * stops working. All in the write that changes the password.
 */
import t from 'tap'
import { api } from '../helpers/api.js'
import { basic, expectError, loginRaw, refreshRaw, whoAmI } from '../helpers/identity.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '0', LOGIN_FAILURES_ALLOWED: '0' })
t.teardown(() => server.stop())
const { client } = server
const owner = await client.createTenant('sessions', 'owner@sessions.test', 'owner-password')
const admin = api(client, 'sessions', owner.token)

async function userWithTwoSessions(name: string): Promise<{ id: string; email: string; a: { token: string; refreshToken: string }; b: { token: string; refreshToken: string } }> {
  const email = `${name}@sessions.test`
  const id = await admin.create('users', { firstName: name, lastName: 'Tester', email, password: `${name}-password` })
  const a = (await loginRaw(client, 'sessions', email, `${name}-password`)).json
  const b = (await loginRaw(client, 'sessions', email, `${name}-password`)).json
  return { id, email, a, b }
}

t.test("PUT of one's own password keeps that session and ends the others", async (t) => {
  const user = await userWithTwoSessions('ada')
  const confirmation = await client.request('POST', '/v1/users/@self/$confirmation', { tenant: 'sessions', query: { token: user.b.token }, body: { currentPassword: 'ada-password' } })
  t.equal(confirmation.status, 201)
  const changed = await client.request('PUT', `/v1/users/${user.id}`, {
    tenant: 'sessions',
    query: { token: user.a.token, version_ignore: true },
    body: { password: 'ada-new-password', currentPassword: 'ada-password' },
  })
  t.equal(changed.status, 200)
  t.equal((await whoAmI(client, 'sessions', user.a.token)).status, 200, 'the session that changed it stays')
  expectError(t, await whoAmI(client, 'sessions', user.b.token), 401, 'TL01-1010', 'another access token ends')
  expectError(t, await refreshRaw(client, 'sessions', user.b.refreshToken), 401, 'TL01-1011', "the other session's refresh token ends")
  t.equal((await refreshRaw(client, 'sessions', user.a.refreshToken)).status, 200, "the changing session's refresh token works")
  const pending = await client.request('POST', `/v1/auth/confirm/${confirmation.json.id as string}`, { query: { apikey: client.apiKey }, headers: basic('', 'ada-third-password') })
  expectError(t, pending, 400, 'TL01-1006', 'a confirmation asked for before the change')
  t.equal((await loginRaw(client, 'sessions', user.email, 'ada-new-password')).status, 200, 'the new password logs in')
  t.equal((await whoAmI(client, 'sessions', owner.token)).status, 200, "other users' sessions are untouched")
})

t.test("an admin's PUT of a user's password ends every session of that user", async (t) => {
  const user = await userWithTwoSessions('bo')
  const changed = await admin.put(`users/${user.id}`, { password: 'bo-new-password' }, { version_ignore: true })
  t.equal(changed.status, 200)
  expectError(t, await whoAmI(client, 'sessions', user.a.token), 401, 'TL01-1010', 'session a')
  expectError(t, await whoAmI(client, 'sessions', user.b.token), 401, 'TL01-1010', 'session b')
  expectError(t, await refreshRaw(client, 'sessions', user.a.refreshToken), 401, 'TL01-1011', 'refresh a')
  t.equal((await whoAmI(client, 'sessions', owner.token)).status, 200, "the admin's own session stays")
})

t.test('a password change in a batch item ends the other sessions too', async (t) => {
  const user = await userWithTwoSessions('cy')
  const batch = await client.request('POST', '/v1/batch', {
    tenant: 'sessions',
    query: { token: user.a.token },
    body: [{ id: 'pw', method: 'PUT', path: `/v1/users/${user.id}?version_ignore=true`, body: JSON.stringify({ password: 'cy-new-password', currentPassword: 'cy-password' }) }],
  })
  t.equal(batch.status, 200)
  t.equal(batch.json?.[0]?.code, 200, batch.text)
  t.equal((await whoAmI(client, 'sessions', user.a.token)).status, 200, 'the batch caller stays')
  expectError(t, await whoAmI(client, 'sessions', user.b.token), 401, 'TL01-1010', 'another session ends')
})

t.test('a change that leaves the password alone ends nothing', async (t) => {
  const user = await userWithTwoSessions('di')
  t.equal((await admin.put(`users/${user.id}`, { firstName: 'Diana' }, { version_ignore: true })).status, 200)
  t.equal((await whoAmI(client, 'sessions', user.a.token)).status, 200)
  t.equal((await whoAmI(client, 'sessions', user.b.token)).status, 200)
})
