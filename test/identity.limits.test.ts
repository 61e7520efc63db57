/*
 * Abuse limits: the request rate per user and tenant (429 TL01-9010 with
 * Retry-After), failed logins per login name and per client address (the
 * test connects from several loopback addresses), and the bounded memory
 * of the window counters.
 */
import t from 'tap'
import { MAX_TRACKED_KEYS, WindowCounter } from '../src/http/rateLimiter.js'
import { startInProcess, tempDataDir } from './helpers/server.js'
import { expectError, loginFrom, whoAmI } from './helpers/identity.js'

t.test('request rate per user and tenant (RATE_LIMIT_REQUESTS=5 per 60 s)', async (t) => {
  const server = await startInProcess(tempDataDir('identity-rate'), { RATE_LIMIT_REQUESTS: '5', RATE_LIMIT_WINDOW_MS: '60000' })
  t.teardown(() => server.stop())
  const { client } = server
  const first = await client.createTenant('rate-a', 'owner@rate-a.test', 'rate-password')
  const other = await client.createTenant('rate-b', 'owner@rate-b.test', 'rate-password')
  await client.request('POST', '/v1/users', { tenant: 'rate-a', query: { token: first.token }, body: { email: 'two@rate-a.test', password: 'rate-password' } })
  const second = await client.login('rate-a', 'two@rate-a.test', 'rate-password')

  // createTenant's own calls were not metered (signup, confirm, login carry no token); the POST above was one.
  for (let index = 2; index <= 5; index += 1) t.equal((await whoAmI(client, 'rate-a', first.token)).status, 200, `request ${index}`)
  const refused = await whoAmI(client, 'rate-a', first.token)
  expectError(t, refused, 429, 'TL01-9010', 'request 6')
  const retryAfter = Number(refused.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After in seconds (${refused.headers['retry-after']})`)
  expectError(t, await client.request('GET', '/v1/time/projects', { tenant: 'rate-a', query: { token: first.token } }), 429, 'TL01-9010', 'any path')
  const anotherLogin = await client.login('rate-a', 'owner@rate-a.test', 'rate-password')
  expectError(t, await whoAmI(client, 'rate-a', anotherLogin), 429, 'TL01-9010', 'a new token of the same user')
  t.equal((await whoAmI(client, 'rate-a', second)).status, 200, 'another user of the tenant is not limited')
  t.equal((await whoAmI(client, 'rate-b', other.token)).status, 200, 'another tenant is not limited')
  const batch = await client.request('POST', '/v1/batch', { tenant: 'rate-b', query: { token: other.token }, body: [1, 2, 3, 4, 5].map((n) => ({ id: String(n), method: 'GET', path: '/v1/users/@self' })) })
  t.equal(batch.status, 200, 'the batch call is the second request of its user')
  t.same(batch.json.map((item: { code: number }) => item.code), [200, 200, 200, 429, 429], 'its items count as requests too')
})

t.test('failed logins per login name and per client address', async (t) => {
  const server = await startInProcess(tempDataDir('identity-logins'))
  t.teardown(() => server.stop())
  const { client, service } = server
  await client.createTenant('guess', 'owner@guess.test', 'right-password')
  await client.createTenant('guess-b', 'owner@guess-b.test', 'right-password')
  const port = service.port

  // Ten wrong passwords for one name, spread over two addresses (five each, under the address limit).
  for (let index = 0; index < 10; index += 1) {
    const failed = await loginFrom(port, index % 2 === 0 ? '127.0.0.2' : '127.0.0.3', 'guess', 'owner@guess.test', `wrong-${index}`)
    t.equal(failed.status, 401, `failure ${index + 1}`)
  }
  const blocked = await loginFrom(port, '127.0.0.4', 'guess', 'owner@guess.test', 'right-password')
  expectError(t, blocked as never, 429, 'TL01-9010', 'the name is blocked, even with the right password, from any address')
  const retryAfter = Number(blocked.headers['retry-after'])
  t.ok(retryAfter >= 55 && retryAfter <= 60, `for a minute (Retry-After ${retryAfter})`)
  t.equal((await loginFrom(port, '127.0.0.4', 'guess-b', 'owner@guess-b.test', 'right-password')).status, 200, 'another name from another address logs in')
  t.equal((await loginFrom(port, '127.0.0.2', 'guess-b', 'owner@guess-b.test', 'right-password')).status, 200, 'the addresses themselves are not blocked')

  // Ten failures from one address, each for a different name.
  for (let index = 0; index < 10; index += 1) t.equal((await loginFrom(port, '127.0.0.5', 'guess-b', `nobody-${index}@guess-b.test`, 'whatever-password')).status, 401)
  expectError(t, (await loginFrom(port, '127.0.0.5', 'guess-b', 'owner@guess-b.test', 'right-password')) as never, 429, 'TL01-9010', 'the address is blocked for every name')
  t.equal((await loginFrom(port, '127.0.0.6', 'guess-b', 'owner@guess-b.test', 'right-password')).status, 200, 'other addresses are not')
})

t.test('window counters keep bounded memory', async (t) => {
  const counter = new WindowCounter(3, 1_000, null, 100)
  for (let index = 0; index < 1_000; index += 1) counter.hit(`key-${index}`, 0)
  t.ok(counter.size <= 100, `at most maxKeys keys (${counter.size})`)
  t.equal(counter.hit('late', 0), 0)
  t.equal(counter.hit('late', 1), 0)
  t.equal(counter.hit('late', 2), 0)
  t.equal(counter.hit('late', 3), 997, 'the fourth event waits for the window to end')
  t.equal(counter.waitMs('late', 999), 1)
  t.equal(counter.waitMs('late', 1_000), 0, 'a new window')
  const blocking = new WindowCounter(2, 1_000, 5_000)
  blocking.hit('k', 0)
  t.equal(blocking.hit('k', 10), 5_000, 'reaching the limit blocks for blockMs')
  t.equal(blocking.waitMs('k', 4_000), 1_010)
  t.equal(blocking.waitMs('k', 5_010), 0)
  t.ok(MAX_TRACKED_KEYS >= 10_000)
})
