/*
 * The token lifecycle of interface.md, row by row, over HTTP: login issues
 * a pair; a missing token is 400, a wrong or expired one 401; a refresh
 * token works once and gives a 7-day token; logout ends the pair; tokens
 * survive a restart; a token or id of one tenant means nothing in another;
 * an unconfirmed account cannot log in.
 */
import t from 'tap'
import { startInProcess, tempDataDir } from '../helpers/server.js'
import { dateMs, expectError, loginRaw, refreshRaw, sleep, whoAmI } from '../helpers/identity.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const MINUTE_MS = 60_000
const DAY_MS = 24 * 60 * MINUTE_MS

const dataDir = tempDataDir('identity-tokens')
let server = await startInProcess(dataDir)
t.teardown(() => server.stop())
const owner = await server.client.createTenant('tokens', 'owner@tokens.test', 'first-password')

t.test('none → token valid: login issues a token and a refresh token', async (t) => {
  const { client } = server
  const before = Date.now()
  const login = await loginRaw(client, 'tokens', 'owner@tokens.test', 'first-password')
  t.equal(login.status, 200)
  t.same(Object.keys(login.json).sort(), ['expiration', 'refreshExpiration', 'refreshToken', 'token'])
  t.match(login.json.token, /^[\w-]{43}$/)
  t.match(login.json.refreshToken, /^[\w-]{43}$/)
  t.not(login.json.token, login.json.refreshToken)
  const lifetime = dateMs(login.json.expiration) - before
  t.ok(lifetime >= 60 * MINUTE_MS - 5_000 && lifetime <= 60 * MINUTE_MS + 5_000, `default lifetime is 60 minutes (${lifetime} ms)`)
  t.ok(dateMs(login.json.refreshExpiration) > dateMs(login.json.expiration), 'the refresh token outlives the token')
  t.equal((await whoAmI(client, 'tokens', login.json.token)).status, 200, 'the token works')
  const bearer = await client.request('GET', '/v1/users/@self', { tenant: 'tokens', headers: { authorization: `Bearer ${login.json.token}` } })
  t.equal(bearer.status, 200, 'also as a Bearer header')

  expectError(t, await loginRaw(client, 'tokens', 'owner@tokens.test', 'wrong-password'), 401, 'TL01-1001', 'wrong password')
  expectError(t, await loginRaw(client, 'tokens', 'nobody@tokens.test', 'first-password'), 401, 'TL01-1001', 'unknown user')
  const noKey = await client.request('GET', '/v1/auth/login', { tenant: 'tokens', headers: { authorization: `Basic ${Buffer.from('owner@tokens.test:first-password').toString('base64')}` } })
  expectError(t, noKey, 401, 'TL01-1001', 'no API key')
})

t.test('missing and invalid tokens', async (t) => {
  const { client } = server
  expectError(t, await client.request('GET', '/v1/users/@self', { tenant: 'tokens' }), 400, 'TL01-1002', 'missing')
  expectError(t, await whoAmI(client, 'tokens', 'x'.repeat(43)), 401, 'TL01-1010', 'unknown')
  const login = await loginRaw(client, 'tokens', 'owner@tokens.test', 'first-password')
  expectError(t, await whoAmI(client, 'tokens', login.json.refreshToken), 401, 'TL01-1010', 'a refresh token is no access token')
})

t.test('token valid or expired → refresh: a new pair, the refreshed token lives 7 days, the refresh token works once', async (t) => {
  const { client } = server
  const login = await loginRaw(client, 'tokens', 'owner@tokens.test', 'first-password')
  const before = Date.now()
  const refreshed = await refreshRaw(client, 'tokens', login.json.refreshToken)
  t.equal(refreshed.status, 200)
  t.same(Object.keys(refreshed.json).sort(), ['expiration', 'refreshExpiration', 'refreshToken', 'token'])
  t.not(refreshed.json.token, login.json.token)
  t.not(refreshed.json.refreshToken, login.json.refreshToken)
  const lifetime = dateMs(refreshed.json.expiration) - before
  t.ok(lifetime >= 7 * DAY_MS - 5_000 && lifetime <= 7 * DAY_MS + 5_000, `refreshed lifetime is 7 days (${lifetime} ms)`)
  t.equal((await whoAmI(client, 'tokens', refreshed.json.token)).status, 200, 'the new token works')

  expectError(t, await refreshRaw(client, 'tokens', login.json.refreshToken), 401, 'TL01-1011', 'second use')
  expectError(t, await refreshRaw(client, 'tokens', 'y'.repeat(43)), 401, 'TL01-1011', 'unknown refresh token')
  expectError(t, await refreshRaw(client, 'tokens', refreshed.json.token), 401, 'TL01-1011', 'an access token is no refresh token')
  const noKey = await client.request('GET', '/v1/auth/refreshtoken', { tenant: 'tokens', query: { refresh_token: refreshed.json.refreshToken } })
  expectError(t, noKey, 401, 'TL01-1001', 'refresh needs the API key')

  const again = await refreshRaw(client, 'tokens', refreshed.json.refreshToken)
  t.equal(again.status, 200, 'the new refresh token works (once)')
  expectError(t, await refreshRaw(client, 'tokens', refreshed.json.refreshToken), 401, 'TL01-1011', 'and only once')
})

t.test('logout ends the token and its refresh token', async (t) => {
  const { client } = server
  const viaGet = await loginRaw(client, 'tokens', 'owner@tokens.test', 'first-password')
  const other = await loginRaw(client, 'tokens', 'owner@tokens.test', 'first-password')
  const out = await client.request('GET', '/v1/auth/logout', { tenant: 'tokens', query: { token: viaGet.json.token } })
  t.equal(out.status, 200)
  expectError(t, await whoAmI(client, 'tokens', viaGet.json.token), 401, 'TL01-1010', 'logged-out token')
  expectError(t, await refreshRaw(client, 'tokens', viaGet.json.refreshToken), 401, 'TL01-1011', 'its refresh token')
  t.equal((await whoAmI(client, 'tokens', other.json.token)).status, 200, 'other sessions stay')

  const viaDelete = await client.request('DELETE', '/v1/auth/token', { tenant: 'tokens', query: { token: other.json.token } })
  t.equal(viaDelete.status, 200)
  expectError(t, await whoAmI(client, 'tokens', other.json.token), 401, 'TL01-1010', 'DELETE auth/token')
  expectError(t, await client.request('GET', '/v1/auth/logout', { tenant: 'tokens' }), 400, 'TL01-1002', 'logout without a token')
})

t.test('tokens survive a restart', async (t) => {
  const login = await loginRaw(server.client, 'tokens', 'owner@tokens.test', 'first-password')
  await server.stop()
  server = await startInProcess(dataDir)
  const { client } = server
  t.equal((await whoAmI(client, 'tokens', owner.token)).status, 200, 'the first token')
  t.equal((await whoAmI(client, 'tokens', login.json.token)).status, 200, 'a later token')
  t.equal((await refreshRaw(client, 'tokens', login.json.refreshToken)).status, 200, 'its refresh token, once')
  expectError(t, await refreshRaw(client, 'tokens', login.json.refreshToken), 401, 'TL01-1011', 'not twice')
})

t.test('tenant isolation: a token or an id of one tenant means nothing in another', async (t) => {
  const { client } = server
  const other = await client.createTenant('tokens-b', 'owner@tokens-b.test', 'other-password')
  const project = await client.request('POST', '/v1/time/projects', { tenant: 'tokens', query: { token: owner.token }, body: { name: 'Mine' } })
  t.equal(project.status, 201)
  expectError(t, await whoAmI(client, 'tokens-b', owner.token), 401, 'TL01-1010', 'token of A on B')
  const foreign = await client.request('GET', `/v1/time/projects/${project.json.id}`, { tenant: 'tokens-b', query: { token: other.token } })
  expectError(t, foreign, 404, 'TL01-1101', 'id of A on B')
  const foreignUser = await client.request('GET', `/v1/users/${(await whoAmI(client, 'tokens', owner.token)).json.id}`, { tenant: 'tokens-b', query: { token: other.token } })
  expectError(t, foreignUser, 404, 'TL01-1101', 'user id of A on B')
  expectError(t, await loginRaw(client, 'tokens-b', 'owner@tokens.test', 'first-password'), 401, 'TL01-1001', 'credentials of A on B')
  expectError(t, await refreshRaw(client, 'tokens-b', (await loginRaw(client, 'tokens', 'owner@tokens.test', 'first-password')).json.refreshToken), 401, 'TL01-1011', 'refresh token of A on B')
})

t.test('an unconfirmed account cannot log in', async (t) => {
  const { client } = server
  const signup = await client.request('POST', '/v1/register/signup', {
    query: { apikey: client.apiKey },
    body: { account: { name: 'Pending Ltd', urlPrefix: 'pending' }, owner: { firstName: 'Pat', lastName: 'Pending', email: 'pat@pending.test', password: 'pending-password' } },
  })
  t.equal(signup.status, 201)
  expectError(t, await loginRaw(client, 'pending', 'pat@pending.test', 'pending-password'), 401, 'TL01-1007', 'before confirm')
  expectError(t, await client.request('POST', '/v1/auth/confirm/00000000-0000-0000-0000-000000000000', { tenant: 'pending', query: { apikey: client.apiKey } }), 400, 'TL01-1006', 'wrong account id')
  t.equal((await client.request('POST', `/v1/auth/confirm/${signup.json.id}`, { tenant: 'pending', query: { apikey: client.apiKey } })).status, 200)
  t.equal((await loginRaw(client, 'pending', 'pat@pending.test', 'pending-password')).status, 200, 'after confirm')
})

t.test('token valid → token expired (TOKEN_LIFETIME_MS=300)', async (t) => {
  const short = await startInProcess(tempDataDir('identity-expiry'), { TOKEN_LIFETIME_MS: '300' })
  t.teardown(() => short.stop())
  const { client } = short
  await client.createTenant('expiry', 'owner@expiry.test', 'expiry-password')
  const login = await loginRaw(client, 'expiry', 'owner@expiry.test', 'expiry-password')
  t.equal((await whoAmI(client, 'expiry', login.json.token)).status, 200, 'valid at first')
  await sleep(450)
  expectError(t, await whoAmI(client, 'expiry', login.json.token), 401, 'TL01-1010', 'expired')
  const refreshed = await refreshRaw(client, 'expiry', login.json.refreshToken)
  t.equal(refreshed.status, 200, 'an expired token can still be refreshed')
  await sleep(450)
  t.equal((await whoAmI(client, 'expiry', refreshed.json.token)).status, 200, 'the refreshed token lives 7 days, not 300 ms')
})
