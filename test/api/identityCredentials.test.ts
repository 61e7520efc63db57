/*
 * Credentials other than the password login: secret keys (create, list,
 * log in with `<key>:`, delete) and the two-step password change (public
 * and authenticated step 1, step 2 on the public URL; the old password and
 * every other token stop working; a confirmation works once, expires, and
 * survives a restart). The public step 1 answers 202 and nothing else for a
 * known and an unknown e-mail alike; the id goes to the user by mail (the
 * file outbox, read from DATA_DIR/outbox); only the user themself gets it
 * in an answer. A reset by mail ends every session, secret key and
 * calendar secret of the user.
 */
import t from 'tap'
import { startInProcess, tempDataDir } from '../helpers/server.js'
import type { TestClient } from '../helpers/http.js'
import { basic, expectError, loginRaw, sleep, whoAmI } from '../helpers/identity.js'
import { confirmationIdIn, mailsTo, requestConfirmationByMail, waitForMail } from '../helpers/mail.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const dataDir = tempDataDir('identity-credentials')
let server = await startInProcess(dataDir)
t.teardown(() => server.stop())
const owner = await server.client.createTenant('keys', 'owner@keys.test', 'owner-password')

async function addUser(client: TestClient, email: string, password: string): Promise<string> {
  const created = await client.request('POST', '/v1/users', { tenant: 'keys', query: { token: owner.token }, body: { firstName: 'Una', lastName: 'User', email, password } })
  if (created.status !== 201) throw new Error(`user create failed: ${created.status} ${created.text}`)
  return created.json.id as string
}

const requestPublic = (client: TestClient, email: string) => client.request('POST', '/v1/users/requestconfirmation', { query: { apikey: client.apiKey, email } })

const confirmPublic = (client: TestClient, id: string, password: string, user = '') =>
  client.request('POST', `/v1/auth/confirm/${id}`, { query: { apikey: client.apiKey }, headers: basic(user, password) })

t.test('secret keys: create, list, log in with <key>:, delete', async (t) => {
  const { client } = server
  const created = await client.request('POST', '/v1/users/@self/secretkeys', { tenant: 'keys', query: { token: owner.token }, body: { name: 'CI' } })
  t.equal(created.status, 201)
  t.match(created.json, { id: /^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/, name: 'CI', secretKey: /^[\w-]{43}$/ })
  t.equal(created.json.user?.email, 'owner@keys.test', 'the key belongs to the caller')
  const key = created.json.secretKey as string
  const bare = await client.request('POST', '/v1/users/@self/secretkeys', { tenant: 'keys', query: { token: owner.token } })
  t.equal(bare.status, 201, 'a body is optional')

  const list = await client.request('GET', '/v1/users/@self/secretkeys', { tenant: 'keys', query: { token: owner.token } })
  t.equal(list.status, 200)
  t.same(list.json.map((entry: { id: string }) => entry.id).sort(), [created.json.id, bare.json.id].sort())
  t.ok(
    list.json.every((entry: { secretKey?: unknown }) => entry.secretKey === null || entry.secretKey === undefined),
    'the list never shows a key',
  )
  const filtered = await client.request('GET', '/v1/users/@self/secretkeys', { tenant: 'keys', query: { token: owner.token, $filter: "name eq 'CI'" } })
  t.same(
    filtered.json.map((entry: { id: string }) => entry.id),
    [created.json.id],
    'list options apply',
  )

  const login = await loginRaw(client, 'keys', key, '')
  t.equal(login.status, 200, 'login with the key and an empty password')
  const self = await whoAmI(client, 'keys', login.json.token)
  t.equal(self.json.email, 'owner@keys.test', 'as the key owner')
  expectError(t, await loginRaw(client, 'keys', key, 'some-password'), 401, 'TL01-1001', 'a key with a password')

  const userId = await addUser(client, 'una@keys.test', 'una-password')
  const unaToken = await client.login('keys', 'una@keys.test', 'una-password')
  const foreign = await client.request('DELETE', `/v1/users/@self/secretkeys/${created.json.id}`, { tenant: 'keys', query: { token: unaToken } })
  expectError(t, foreign, 404, 'TL01-1101', "another user's key")
  t.equal((await client.request('GET', '/v1/users/@self/secretkeys', { tenant: 'keys', query: { token: unaToken } })).json.length, 0, 'each user sees their own keys')
  t.ok(userId)

  const removed = await client.request('DELETE', `/v1/users/@self/secretkeys/${created.json.id}`, { tenant: 'keys', query: { token: owner.token } })
  t.equal(removed.status, 200)
  expectError(t, await loginRaw(client, 'keys', key, ''), 401, 'TL01-1001', 'a deleted key')
  expectError(t, await client.request('DELETE', `/v1/users/@self/secretkeys/${created.json.id}`, { tenant: 'keys', query: { token: owner.token } }), 404, 'TL01-1101', 'deleted twice')
  const after = await client.request('GET', '/v1/users/@self/secretkeys', { tenant: 'keys', query: { token: owner.token } })
  t.same(
    after.json.map((entry: { id: string }) => entry.id),
    [bare.json.id],
  )
})

t.test('password change, public step 1: 202 without the id, the id by mail', async (t) => {
  const { client } = server
  await addUser(client, 'pia@keys.test', 'pia-password')
  const before = await client.login('keys', 'pia@keys.test', 'pia-password')
  const key = await client.request('POST', '/v1/users/@self/secretkeys', { tenant: 'keys', query: { token: before }, body: { name: 'pia key' } })
  t.equal(key.status, 201)
  const calendar = await client.request('POST', '/v1/users/@self/calendar/secret', { tenant: 'keys', query: { token: before } })
  t.equal(calendar.status, 201)

  const request = await requestPublic(client, 'Pia@Keys.test')
  t.equal(request.status, 202, 'accepted')
  t.same(request.json, {}, 'the answer carries no id')
  const mail = await waitForMail(dataDir, 'pia@keys.test')
  t.match(mail.subject, /password/i)
  const id = confirmationIdIn(mail)
  t.notOk(request.text.includes(id), 'the id is not in the answer')
  const unknown = await requestPublic(client, 'nobody@keys.test')
  t.equal(unknown.status, request.status, 'an unknown e-mail: same status')
  t.equal(unknown.text, request.text, 'the same answer')
  await sleep(100)
  t.equal(mailsTo(dataDir, 'nobody@keys.test').length, 0, 'and no mail')
  expectError(t, await client.request('POST', '/v1/users/requestconfirmation', { query: { email: 'pia@keys.test' } }), 401, 'TL01-1001', 'step 1 needs the API key')

  expectError(t, await confirmPublic(client, id, 'short'), 412, 'TL01-1104', 'a password under 8 characters')
  expectError(t, await confirmPublic(client, id, 'new-password', 'pia@keys.test'), 400, 'TL01-1105', 'the user name must be empty')
  const noKey = await client.request('POST', `/v1/auth/confirm/${id}`, { headers: basic('', 'new-password') })
  expectError(t, noKey, 401, 'TL01-1001', 'step 2 needs the API key')

  const confirmed = await confirmPublic(client, id, 'pia-new-password')
  t.equal(confirmed.status, 200)
  t.match(confirmed.json, { id: /^[0-9a-f-]{36}$/, version: 2 })
  expectError(t, await loginRaw(client, 'keys', 'pia@keys.test', 'pia-password'), 401, 'TL01-1001', 'the old password')
  t.equal((await loginRaw(client, 'keys', 'pia@keys.test', 'pia-new-password')).status, 200, 'the new password')
  expectError(t, await whoAmI(client, 'keys', before), 401, 'TL01-1010', 'a token from before the change')
  expectError(t, await loginRaw(client, 'keys', key.json.secretKey, ''), 401, 'TL01-1001', 'a reset by mail ends the secret keys too')
  const feed = await client.request('GET', '/v1/users/@self/calendar.ics', { tenant: 'keys', query: { secret: calendar.json.secret } })
  expectError(t, feed, 401, 'TL01-1010', 'and the calendar secret')
  expectError(t, await confirmPublic(client, id, 'pia-third-password'), 400, 'TL01-1006', 'a confirmation works once')
})

t.test('password change, authenticated step 1 (the user themself, or a superuser)', async (t) => {
  const { client } = server
  const quinId = await addUser(client, 'quin@keys.test', 'quin-password')
  const asking = await client.login('keys', 'quin@keys.test', 'quin-password')
  const elsewhere = await client.login('keys', 'quin@keys.test', 'quin-password')

  const current = { currentPassword: 'quin-password' }
  expectError(t, await client.request('POST', '/v1/users/@self/$confirmation', { tenant: 'keys', query: { token: asking } }), 403, 'TL01-1008', 'for oneself, not without the current password')
  const wrong = await client.request('POST', '/v1/users/@self/$confirmation', { tenant: 'keys', query: { token: asking }, body: { currentPassword: 'not-quin' } })
  expectError(t, wrong, 403, 'TL01-1008', 'nor with a wrong one')
  const mine = await client.request('POST', '/v1/users/@self/$confirmation', { tenant: 'keys', query: { token: asking }, body: current })
  t.equal(mine.status, 201)
  t.same(Object.keys(mine.json), ['id'])
  const byId = await client.request('POST', `/v1/users/${quinId}/$confirmation`, { tenant: 'keys', query: { token: asking }, body: current })
  t.equal(byId.status, 201, 'by id as well')
  expectError(t, await confirmPublic(client, mine.json.id, 'quin-new-password'), 400, 'TL01-1006', 'a newer request replaces the older one')
  const ownerId = (await whoAmI(client, 'keys', owner.token)).json.id as string
  const notMine = await client.request('POST', `/v1/users/${ownerId}/$confirmation`, { tenant: 'keys', query: { token: asking } })
  expectError(t, notMine, 403, 'TL01-1008', "a user cannot ask for another user's password")
  expectError(t, await client.request('GET', '/v1/users/@self/$confirmation', { tenant: 'keys', query: { token: asking } }), 405, 'TL01-9004', 'GET')

  t.equal((await confirmPublic(client, byId.json.id, 'quin-new-password')).status, 200)
  t.equal((await whoAmI(client, 'keys', asking)).status, 200, 'the session that asked stays')
  expectError(t, await whoAmI(client, 'keys', elsewhere), 401, 'TL01-1010', 'every other session ends')
  t.equal((await loginRaw(client, 'keys', 'quin@keys.test', 'quin-new-password')).status, 200)

  const mailsBefore = mailsTo(dataDir, 'quin@keys.test').length
  const bySuperuser = await client.request('POST', `/v1/users/${quinId}/$confirmation`, { tenant: 'keys', query: { token: owner.token } })
  t.equal(bySuperuser.status, 202, 'the owner may ask for any user')
  t.same(bySuperuser.json, {}, 'but gets no id: it goes to the user by mail')
  const mailed = confirmationIdIn(await waitForMail(dataDir, 'quin@keys.test', mailsBefore + 1))
  t.equal((await confirmPublic(client, mailed, 'quin-third-password')).status, 200)
  expectError(t, await whoAmI(client, 'keys', asking), 401, 'TL01-1010', "then none of the user's sessions stays")
  t.equal((await whoAmI(client, 'keys', owner.token)).status, 200, "the owner's session is not touched")
  const missing = await client.request('POST', '/v1/users/00000000-0000-4000-8000-000000000000/$confirmation', { tenant: 'keys', query: { token: owner.token } })
  expectError(t, missing, 404, 'TL01-1101', 'an unknown user')
})

t.test('a confirmation survives a restart', async (t) => {
  await addUser(server.client, 'rex@keys.test', 'rex-password')
  const id = await requestConfirmationByMail(server.client, dataDir, 'rex@keys.test')
  await server.stop()
  server = await startInProcess(dataDir)
  t.equal((await confirmPublic(server.client, id, 'rex-new-password')).status, 200)
  t.equal((await loginRaw(server.client, 'keys', 'rex@keys.test', 'rex-new-password')).status, 200)
})

t.test('an expired confirmation does not work (PASSWORD_CONFIRMATION_LIFETIME_MS=200)', async (t) => {
  const short = await startInProcess(tempDataDir('identity-confirmation'), { PASSWORD_CONFIRMATION_LIFETIME_MS: '200' })
  t.teardown(() => short.stop())
  await short.client.createTenant('expiring', 'owner@expiring.test', 'expiring-password')
  const id = await requestConfirmationByMail(short.client, short.dataDir, 'owner@expiring.test')
  await sleep(300)
  expectError(t, await confirmPublic(short.client, id, 'expiring-new-password'), 400, 'TL01-1006', 'expired')
  t.equal((await loginRaw(short.client, 'expiring', 'owner@expiring.test', 'expiring-password')).status, 200, 'the password is unchanged')
})
