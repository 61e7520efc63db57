/*
 * Abuse limits: the request rate per user and tenant (429 TL01-9010 with
 * Retry-After); failed logins per (name, address) pair, per account and
 * per address for sources that did not log in lately (the test connects
 * from several loopback addresses); wrong API keys per address; and the
 * bounded memory of the window counters and known sources.
 */
import http from 'node:http'
import t from 'tap'
import { KnownSources } from '../../src/http/knownSources.js'
import { MAX_TRACKED_KEYS, WindowCounter } from '../../src/http/windowCounter.js'
import { startInProcess, tempDataDir, TEST_API_KEY } from '../helpers/server.js'
import { expectError, loginFrom, whoAmI } from '../helpers/identity.js'

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
  const batch = await client.request('POST', '/v1/batch', {
    tenant: 'rate-b',
    query: { token: other.token },
    body: [1, 2, 3, 4, 5].map((n) => ({ id: String(n), method: 'GET', path: '/v1/users/@self' })),
  })
  t.equal(batch.status, 200, 'the batch call is the second request of its user')
  t.same(
    batch.json.map((item: { code: number }) => item.code),
    [200, 200, 200, 429, 429],
    'its items count as requests too',
  )
})

t.test('failed logins of one source lock out that source, not the user (default limits)', async (t) => {
  const server = await startInProcess(tempDataDir('identity-logins'))
  t.teardown(() => server.stop())
  const { client, service } = server
  await client.createTenant('guess', 'owner@guess.test', 'right-password')
  await client.createTenant('guess-b', 'owner@guess-b.test', 'right-password')
  const port = service.port

  // Ten wrong passwords for one name from one address: that pair is blocked, the user is not.
  for (let index = 0; index < 10; index += 1) t.equal((await loginFrom(port, '127.0.0.2', 'guess', 'owner@guess.test', `wrong-${index}`)).status, 401, `failure ${index + 1}`)
  const blocked = await loginFrom(port, '127.0.0.2', 'guess', 'owner@guess.test', 'right-password')
  expectError(t, blocked as never, 429, 'TL01-9010', 'the guessing address is refused, even with the right password')
  const retryAfter = Number(blocked.headers['retry-after'])
  t.ok(retryAfter >= 55 && retryAfter <= 60, `for a minute (Retry-After ${retryAfter})`)
  t.equal((await loginFrom(port, '127.0.0.4', 'guess', 'owner@guess.test', 'right-password')).status, 200, 'the user logs in from an address without failures')
  t.equal((await loginFrom(port, '127.0.0.2', 'guess', 'other@guess.test', 'whatever-password')).status, 401, 'the guessing address may still try other names (its tenant-wide limit is higher)')

  // Ten failures from one address, each for a different name of tenant guess-b.
  for (let index = 0; index < 10; index += 1) t.equal((await loginFrom(port, '127.0.0.5', 'guess-b', `nobody-${index}@guess-b.test`, 'whatever-password')).status, 401)
  t.equal((await loginFrom(port, '127.0.0.5', 'guess', 'owner@guess.test', 'right-password')).status, 200, "another tenant's user behind that address is not locked out")
  t.equal((await loginFrom(port, '127.0.0.5', 'guess-b', 'owner@guess-b.test', 'right-password')).status, 200, 'nor one of the same tenant with no failures of its own')
})

t.test('the account and address limits bind unknown sources; a source that logged in is bound by its own failures only', async (t) => {
  const server = await startInProcess(tempDataDir('identity-lockout'), {
    LOGIN_FAILURES_ALLOWED: '3',
    LOGIN_ACCOUNT_FAILURES_ALLOWED: '5',
    LOGIN_ADDRESS_FAILURES_ALLOWED: '4',
    LOGIN_ADDRESS_FAILURES_ALLOWED_ALL_TENANTS: '6',
  })
  t.teardown(() => server.stop())
  const { client, service } = server
  const port = service.port
  for (const tenant of ['lock-a', 'lock-b', 'lock-c']) await client.createTenant(tenant, `owner@${tenant}.test`, 'right-password')
  t.equal((await loginFrom(port, '127.0.0.9', 'lock-a', 'owner@lock-a.test', 'right-password')).status, 200, 'the owner logs in from home once')
  t.equal((await loginFrom(port, '127.0.0.20', 'lock-a', 'owner@lock-a.test', 'right-password')).status, 200, '… and from the office')

  // Guesses at the owner spread over five addresses, one each: the account limit (5) is reached.
  for (let index = 0; index < 5; index += 1) t.equal((await loginFrom(port, `127.0.0.${10 + index}`, 'lock-a', 'owner@lock-a.test', `wrong-${index}`)).status, 401)
  const locked = await loginFrom(port, '127.0.0.15', 'lock-a', 'owner@lock-a.test', 'right-password')
  expectError(t, locked as never, 429, 'TL01-9010', 'a new address is refused while the account is under attack')
  t.equal((await loginFrom(port, '127.0.0.9', 'lock-a', 'owner@lock-a.test', 'right-password')).status, 200, 'the owner still logs in from home')
  for (let index = 0; index < 3; index += 1) t.equal((await loginFrom(port, '127.0.0.9', 'lock-a', 'owner@lock-a.test', `typo-${index}`)).status, 401)
  expectError(t, (await loginFrom(port, '127.0.0.9', 'lock-a', 'owner@lock-a.test', 'right-password')) as never, 429, 'TL01-9010', 'a known source is held by its own failures')

  // From the office address: four names of lock-b tried (its tenant limit), then two of lock-c (the cap over all tenants).
  for (let index = 0; index < 4; index += 1) t.equal((await loginFrom(port, '127.0.0.20', 'lock-b', `nobody-${index}@lock-b.test`, 'whatever')).status, 401)
  expectError(t, (await loginFrom(port, '127.0.0.20', 'lock-b', 'owner@lock-b.test', 'right-password')) as never, 429, 'TL01-9010', 'the address is refused for lock-b')
  t.equal((await loginFrom(port, '127.0.0.20', 'lock-c', 'owner@lock-c.test', 'right-password')).status, 200, 'not for lock-c')
  for (let index = 0; index < 2; index += 1) t.equal((await loginFrom(port, '127.0.0.20', 'lock-c', `nobody-${index}@lock-c.test`, 'whatever')).status, 401)
  expectError(t, (await loginFrom(port, '127.0.0.21', 'lock-c', 'owner@lock-c.test', 'wrong')) as never, 401, 'TL01-1001', 'another address is not limited')
  const capped = await loginFrom(port, '127.0.0.20', 'lock-b', 'nobody@lock-b.test', 'whatever')
  expectError(t, capped as never, 429, 'TL01-9010', 'six failures from the address over all tenants: refused for unknown names everywhere')
  t.equal((await loginFrom(port, '127.0.0.20', 'lock-a', 'owner@lock-a.test', 'right-password')).status, 200, 'but the owner of lock-a, known at that address, still logs in')
  t.equal((await loginFrom(port, '127.0.0.20', 'lock-c', 'owner@lock-c.test', 'right-password')).status, 200, 'and so does the owner of lock-c, who logged in there before')
})

/** A public call (register/checkurl) from a chosen loopback address with the given API key. */
function checkUrlFrom(port: number, localAddress: string, apiKey: string): Promise<{ status: number; code: string | undefined; retryAfter: number }> {
  return new Promise((resolve, reject) => {
    const query = new URLSearchParams({ apikey: apiKey, url: 'anything' })
    const request = http.request({ host: '127.0.0.1', port, localAddress, method: 'GET', path: `/v1/register/checkurl?${query}`, agent: false }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { code?: string }
        resolve({ status: response.statusCode ?? 0, code: body.code, retryAfter: Number(response.headers['retry-after']) })
      })
    })
    request.on('error', reject)
    request.end()
  })
}

t.test('wrong API keys are counted per client address (API_KEY_FAILURES_ALLOWED=10 per 60 s)', async (t) => {
  const server = await startInProcess(tempDataDir('identity-apikeys'))
  t.teardown(() => server.stop())
  const { client, service } = server
  const port = service.port
  await client.createTenant('keyed', 'owner@keyed.test', 'right-password')
  t.equal((await checkUrlFrom(port, '127.0.0.30', TEST_API_KEY)).status, 200, 'the right key')
  for (let index = 0; index < 10; index += 1) t.equal((await checkUrlFrom(port, '127.0.0.30', `guess-${index}`)).code, 'TL01-1001', `wrong key ${index + 1}: 401`)
  const refused = await checkUrlFrom(port, '127.0.0.30', 'guess-10')
  t.same([refused.status, refused.code], [429, 'TL01-9010'], 'the eleventh is refused')
  t.ok(refused.retryAfter >= 55 && refused.retryAfter <= 60, `for a minute (Retry-After ${refused.retryAfter})`)
  t.equal((await checkUrlFrom(port, '127.0.0.30', TEST_API_KEY)).status, 429, 'whatever key the address sends')
  const login = await loginFrom(port, '127.0.0.30', 'keyed', 'owner@keyed.test', 'right-password')
  expectError(t, login as never, 429, 'TL01-9010', 'login from that address checks the key too')
  t.equal((await checkUrlFrom(port, '127.0.0.31', TEST_API_KEY)).status, 200, 'another address is not limited')
  const keyless = await Promise.all(Array.from({ length: 15 }, () => checkUrlFrom(port, '127.0.0.33', '')))
  t.same(new Set(keyless.map((answer) => answer.code)), new Set(['TL01-1001']), 'a request without a key guesses nothing and is not counted')

  const parallel = await Promise.all(Array.from({ length: 40 }, (_, index) => checkUrlFrom(port, '127.0.0.32', `parallel-${index}`)))
  t.equal(parallel.filter((answer) => answer.status === 401).length, 10, 'of 40 wrong keys at once, 10 are checked')
  t.equal(parallel.filter((answer) => answer.status === 429 && answer.retryAfter >= 1).length, 30, 'the rest refused with Retry-After')
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
  const known = new KnownSources(1_000, 100)
  for (let index = 0; index < 1_000; index += 1) known.remember(`pair-${index}`, 0)
  t.ok(known.size <= 100, `known sources: at most maxKeys (${known.size})`)
  t.ok(known.has('pair-999', 999), 'the newest is kept')
  t.notOk(known.has('pair-999', 1_000), 'for rememberMs')
})
