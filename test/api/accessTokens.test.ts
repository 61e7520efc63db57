/*
 * `users/@self/accesstokens` (issue 26): the caller's sessions, listed
 * without any token text and never another user's; DELETE ends one (both of
 * its tokens), and ending the current one logs out.
 */
import t from 'tap'
import { startInProcess } from '../helpers/server.js'
import { api, newUser } from '../helpers/api.js'
import { dateMs, expectError, loginRaw, refreshRaw, whoAmI } from '../helpers/identity.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const created = await client.createTenant('sessions-a', 'owner@sessions-a.test', 'owner-password')
const owner = api(client, 'sessions-a', created.token)
const other = await newUser(client, 'sessions-a', owner, 'Otto')

const list = (token: string, query: Record<string, string> = {}) => client.request('GET', '/v1/users/@self/accesstokens', { tenant: 'sessions-a', query: { token, ...query } })
const revoke = (token: string, id: string) => client.request('DELETE', `/v1/users/@self/accesstokens/${id}`, { tenant: 'sessions-a', query: { token } })

t.test("the list shows the caller's sessions and no token text", async (t) => {
  const second = await loginRaw(client, 'sessions-a', 'owner@sessions-a.test', 'owner-password')
  const listed = await list(created.token)
  t.equal(listed.status, 200, listed.text)
  t.equal(listed.json.length, 2, "the owner's two sessions, not Otto's")
  for (const session of listed.json) {
    t.match(session.id, /^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/, 'a UUID id')
    t.same(Object.keys(session).sort(), ['createdAt', 'current', 'displayName', 'expiration', 'id', 'refreshExpiration'])
    t.ok(dateMs(session.expiration) > Date.now(), 'an expiration to come')
  }
  t.same(
    listed.json.map((session: { current: boolean }) => session.current),
    [true, false],
    'oldest first; the current one marked',
  )
  t.equal(dateMs(listed.json[1].expiration), dateMs(second.json.expiration), "the second login's expiration")
  for (const secret of [created.token, second.json.token, second.json.refreshToken]) t.notOk(listed.text.includes(secret), 'no token text')
  const otto = await other.api.get('users/@self/accesstokens')
  t.equal(otto.json.length, 1, 'Otto sees only his own')
  t.notOk(listed.json.some((session: { id: string }) => session.id === otto.json[0].id))
  const xml = await list(created.token, { format: 'xml' })
  t.match(xml.text, /<accessTokens>\s*<accessToken>/, 'XML: a list of accessToken elements')
})

t.test('DELETE ends one session: its token and its refresh token', async (t) => {
  const login = await loginRaw(client, 'sessions-a', 'owner@sessions-a.test', 'owner-password')
  const session = (await list(login.json.token)).json.find((entry: { current: boolean }) => entry.current)
  const otto = (await other.api.get('users/@self/accesstokens')).json[0]
  expectError(t, await revoke(created.token, otto.id), 404, 'TL01-1101', "another user's session is not found")
  t.equal((await other.api.get('users/@self')).status, 200, 'and goes on')
  const revoked = await revoke(created.token, session.id)
  t.equal(revoked.status, 200, revoked.text)
  t.same(revoked.json, { id: session.id, deleted: true, loggedOut: false })
  expectError(t, await whoAmI(client, 'sessions-a', login.json.token), 401, 'TL01-1010', 'the revoked token')
  expectError(t, await refreshRaw(client, 'sessions-a', login.json.refreshToken), 401, 'TL01-1011', 'its refresh token')
  t.equal((await whoAmI(client, 'sessions-a', created.token)).status, 200, 'the revoking session goes on')
  expectError(t, await revoke(created.token, session.id), 404, 'TL01-1101', 'revoked twice')
  expectError(t, await revoke(created.token, 'not-a-session'), 404, 'TL01-1101', 'an unknown id')
})

t.test('revoking the current session logs out', async (t) => {
  const login = await loginRaw(client, 'sessions-a', 'owner@sessions-a.test', 'owner-password')
  const current = (await list(login.json.token)).json.find((entry: { current: boolean }) => entry.current)
  const revoked = await revoke(login.json.token, current.id)
  t.same(revoked.json, { id: current.id, deleted: true, loggedOut: true })
  expectError(t, await whoAmI(client, 'sessions-a', login.json.token), 401, 'TL01-1010', 'the token no longer works')
  expectError(t, await list(login.json.token), 401, 'TL01-1010', 'nor lists')
  expectError(t, await client.request('GET', '/v1/users/@self/accesstokens', { tenant: 'sessions-a' }), 400, 'TL01-1002', 'no token')
})

t.test('a refreshed session is listed until both of its tokens are gone', async (t) => {
  const login = await loginRaw(client, 'sessions-a', 'owner@sessions-a.test', 'owner-password')
  const refreshed = await refreshRaw(client, 'sessions-a', login.json.refreshToken)
  t.equal(refreshed.status, 200)
  const sessions = (await list(refreshed.json.token)).json
  const old = sessions.find((entry: { expiration: string }) => dateMs(entry.expiration) === dateMs(login.json.expiration))
  t.equal(old?.refreshExpiration, null, 'the old access token, its refresh token used')
  t.ok(
    sessions.some((entry: { current: boolean; refreshExpiration: string }) => entry.current && dateMs(entry.refreshExpiration) === dateMs(refreshed.json.refreshExpiration)),
    'the new pair',
  )
})
