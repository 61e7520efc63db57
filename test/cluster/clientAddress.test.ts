/*
 * Behind HAProxy each client is counted by its own address (issue 37,
 * finding 2). HAProxy connects to the nodes from its own address, so the
 * per-address limits (wrong API keys, failed logins) were one count for
 * every client: one client's wrong keys refused every other client's right
 * key. Now HAProxy names each client's address in a PROXY protocol v2
 * header and the nodes believe it from their TRUSTED_PROXIES (HAProxy's
 * address here) and from nobody else.
 *
 * Two clients on two addresses of this machine (127.0.0.2, 127.0.0.3)
 * through HAProxy: the one that exhausts its limit is refused, the other
 * is not. A forged X-Forwarded-For or PROXY header from the refused
 * client, through HAProxy or straight at a node, changes nothing; the same
 * header from a trusted proxy (127.0.0.1) is believed. A request a node
 * forwards to the node holding its tenant keeps the client's address.
 */
import http from 'node:http'
import t from 'tap'
import { startInProcessCluster } from '../helpers/cluster.js'
import { proxyV2Header, rawExchange, rawRequest } from '../helpers/rawHttp.js'
import { tempDataDir, TEST_API_KEY } from '../helpers/server.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  const FAILURES_ALLOWED = 3
  const cluster = await startInProcessCluster(tempDataDir('client-address'), {
    API_KEY_FAILURES_ALLOWED: String(FAILURES_ALLOWED),
    LOGIN_FAILURES_ALLOWED: String(FAILURES_ALLOWED),
    LOGIN_ACCOUNT_FAILURES_ALLOWED: '100',
    LOGIN_ADDRESS_FAILURES_ALLOWED: '100',
    LOGIN_ADDRESS_FAILURES_ALLOWED_ALL_TENANTS: '100',
  })
  t.teardown(() => cluster.stop())
  const { client, services } = cluster
  const ALICE = '127.0.0.2'
  const BOB = '127.0.0.3'

  /** A GET from `localAddress` to `port` with the Host of `tenant` (null: the public address). */
  function getFrom(localAddress: string, port: number, path: string, tenant: string | null, headers: Record<string, string> = {}): Promise<number> {
    return new Promise((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, localAddress, path, headers: { host: tenant === null ? 'localhost' : `${tenant}.localhost`, ...headers }, agent: false }, (response) => {
        response.resume()
        response.on('end', () => resolve(response.statusCode ?? 0))
      })
      request.on('error', reject)
      request.end()
    })
  }

  const checkUrl = (apiKey: string) => `/v1/register/checkurl?url=anything&apikey=${apiKey}`

  t.test('wrong API keys: one client past its limit, the other served', async (t) => {
    for (let index = 0; index < FAILURES_ALLOWED; index += 1) t.equal(await getFrom(ALICE, client.port, checkUrl('wrong-key'), null), 401, `Alice's wrong key ${index + 1}`)
    t.equal(await getFrom(ALICE, client.port, checkUrl(TEST_API_KEY), null), 429, 'Alice is refused now, even with the right key')
    t.equal(await getFrom(BOB, client.port, checkUrl(TEST_API_KEY), null), 200, "Bob's right key works: his address is his own")

    const forged = { 'x-forwarded-for': BOB }
    t.equal(await getFrom(ALICE, client.port, checkUrl(TEST_API_KEY), null, forged), 429, "Alice's X-Forwarded-For naming Bob, through HAProxy: ignored")
    for (const [index, node] of services.entries()) {
      // Straight at each node, where Alice's failures may or may not have been counted: she is never taken for Bob.
      const direct = await getFrom(ALICE, node.port, checkUrl(TEST_API_KEY), null, forged)
      const plain = await getFrom(ALICE, node.port, checkUrl(TEST_API_KEY), null)
      t.equal(direct, plain, `node ${index + 1}: a forged X-Forwarded-For from an untrusted peer changes nothing (${plain})`)
      const proxied = await rawExchange(node.port, rawRequest('GET', checkUrl(TEST_API_KEY), { Host: 'localhost' }), { localAddress: ALICE, preamble: proxyV2Header(BOB) })
      t.equal(proxied.status, plain, `node ${index + 1}: a forged PROXY header from an untrusted peer changes nothing`)
    }
  })

  t.test('a trusted proxy is believed: the same headers from 127.0.0.1 name the client', async (t) => {
    // The node that counted Alice's failures is the one HAProxy sends the public host to.
    const counting = await Promise.all(services.map((node) => getFrom(ALICE, node.port, checkUrl(TEST_API_KEY), null)))
    const index = counting.indexOf(429)
    const node = services[index]
    if (node === undefined) throw new Error('no node counted the failures')
    t.equal(await getFrom('127.0.0.1', node.port, checkUrl(TEST_API_KEY), null, { 'x-forwarded-for': ALICE }), 429, 'X-Forwarded-For from the trusted proxy: taken for Alice')
    t.equal(await getFrom('127.0.0.1', node.port, checkUrl(TEST_API_KEY), null, { 'x-forwarded-for': `${ALICE}, ${BOB}` }), 200, 'the rightmost untrusted hop (Bob) is the client')
    const proxied = await rawExchange(node.port, rawRequest('GET', checkUrl(TEST_API_KEY), { Host: 'localhost' }), { preamble: proxyV2Header(ALICE) })
    t.equal(proxied.status, 429, 'a PROXY header from the trusted proxy: taken for Alice')
  })

  t.test('failed logins: one client past its limit, the other logs in; a forwarded login keeps the address', async (t) => {
    const tenant = 'addresses'
    const owner = await client.createTenant(tenant)
    const login = `/v1/auth/login?apikey=${TEST_API_KEY}`
    const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`${owner.email}:${password}`).toString('base64')}` })
    for (let index = 0; index < FAILURES_ALLOWED; index += 1) t.equal(await getFrom(ALICE, client.port, login, tenant, basic('wrong')), 401, `Alice's wrong password ${index + 1}`)
    t.equal(await getFrom(ALICE, client.port, login, tenant, basic(owner.password)), 429, 'Alice is refused now, even with the right password')
    t.equal(await getFrom(BOB, client.port, login, tenant, basic(owner.password)), 200, 'Bob logs in through HAProxy with the same name')

    // Straight at the node that does not hold the tenant: it forwards, with the client's address.
    const holder = services.findIndex(({ services: node }) => [...node.registry.active()].some((actor) => actor.tenant === tenant))
    const other = services[1 - holder]
    if (holder < 0 || other === undefined) throw new Error('no node holds the tenant')
    const CAROL = '127.0.0.4'
    const DAVE = '127.0.0.5'
    for (let index = 0; index < FAILURES_ALLOWED; index += 1) t.equal(await getFrom(CAROL, other.port, login, tenant, basic('wrong')), 401, `Carol's wrong password ${index + 1}, forwarded`)
    t.equal(await getFrom(CAROL, other.port, login, tenant, basic(owner.password)), 429, 'Carol is refused by the holding node')
    t.equal(await getFrom(DAVE, other.port, login, tenant, basic(owner.password)), 200, 'Dave, forwarded by the same node, logs in')
  })
}
