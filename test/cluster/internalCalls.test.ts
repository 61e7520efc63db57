/*
 * Nobody but a node reaches a node's own endpoints (issue 37, finding 1).
 * A node forwarded a request for a tenant held elsewhere to
 * `new URL(rawTarget, nodeUrl)` with the cluster secret: the URL parser
 * read `\` as `/` and resolved `..`, so
 * `POST /v1/a\..\..\cluster/tenants/<t>/writes/confirmByEmail` made a
 * confirmation of the attacker's choosing for the owner, `…/changePassword`
 * then set the owner's password, `…/restore` rolled the tenant back and
 * `…/release` dropped its lease. Through HAProxy it sufficed to write the
 * tenant's host in other letter case, which HAProxy hashed to another
 * node.
 *
 * Here that attack and its variants (`\`, `..`, `%2e%2e`, `%5c`, `//`,
 * encoded slashes, absolute-form targets, with the tenant by host in any
 * letter case or by path) go, over raw sockets (a client library would
 * tidy the path), through HAProxy and straight at each node's public and
 * internal port. None is answered 2xx, and afterwards the tenant is as it
 * was: its log and confirmations untouched, its lease with the same owner
 * and epoch, its projects all there, the owner's password working and the
 * attacker's not.
 */
import postgres from 'postgres'
import t from 'tap'
import { hashPassword, secretId } from '../../src/domain/credentials.js'
import { leaseRowOf, startInProcessCluster } from '../helpers/cluster.js'
import { rawExchange, rawRequest } from '../helpers/rawHttp.js'
import { tempDataDir, TEST_API_KEY } from '../helpers/server.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  const VICTIM = 'victim'
  /** How long an attempt waits for its answer; an absolute-form target, which uWS never answers (it holds the connection), less. */
  const ANSWER_WAIT_MS = 15_000
  const ABSOLUTE_FORM_WAIT_MS = 1_500
  const cluster = await startInProcessCluster(tempDataDir('internal-calls'))
  t.teardown(() => cluster.stop())
  const { client, services } = cluster
  const databaseUrl = services[0]?.services.config.cluster?.databaseUrl ?? ''
  const owner = await client.createTenant(VICTIM)
  for (let index = 1; index <= 3; index += 1) {
    const made = await client.request('POST', '/v1/time/projects', { tenant: VICTIM, query: { token: owner.token }, body: { name: `Kept ${index}` } })
    if (made.status !== 201) throw new Error(`a project was not made: ${made.text}`)
  }

  const CHOSEN_CONFIRMATION = 'chosen-by-the-attacker-0123456789'
  const ATTACKER_PASSWORD = 'attacker-password'
  const attackerHash = await hashPassword(ATTACKER_PASSWORD, { memoryKiB: 1024, passes: 1, parallelism: 1 })

  /** The node calls of the attack, in its order, each with its body. */
  const CALLS: [string, string][] = [
    [`cluster/tenants/${VICTIM}/writes/confirmByEmail`, JSON.stringify({ email: owner.email, confirmationId: CHOSEN_CONFIRMATION, lifetimeMs: 3_600_000 })],
    [`cluster/tenants/${VICTIM}/writes/changePassword`, JSON.stringify({ hash: secretId(CHOSEN_CONFIRMATION), passwordHash: attackerHash })],
    [`cluster/tenants/${VICTIM}/restore`, JSON.stringify({ toSeq: 1 })],
    [`cluster/tenants/${VICTIM}/release`, ''],
  ]

  /** Ways to write a path below `base` (`/v1` of an address) that a URL parser would resolve to `/<call>`. */
  const ESCAPES: [string, (base: string, call: string) => string][] = [
    ['backslashes', (base, call) => `${base}/a\\..\\..\\${call}`],
    ['backslashes, dot segments of their own', (base, call) => `${base}\\..\\..\\${call}`],
    ['dot segments', (base, call) => `${base}/a/../../${call}`],
    ['encoded dots', (base, call) => `${base}/a/%2e%2e/%2E%2E/${call}`],
    ['encoded backslashes', (base, call) => `${base}/a%5c..%5c..%5c${call.replaceAll('/', '%5c')}`],
    ['encoded slashes', (base, call) => `${base}/a%2f..%2f..%2f${call}`],
    ['double slashes', (base, call) => `${base}//..//..//${call}`],
    ['backslashes and encoded dots', (base, call) => `${base}/a\\%2e%2e\\%2e%2e\\${call}`],
    ['the call itself', (_base, call) => `/${call}`],
    ['protocol-relative', (_base, call) => `//${call}`],
  ]

  /** The tenant's addresses: by host in several letter cases, and by path on the public address. */
  const ADDRESSES: [string, string, string][] = [
    ['host', 'victim.localhost', '/v1'],
    ['HOST', 'VICTIM.localhost', '/v1'],
    ['Host', 'Victim.LocalHost', '/v1'],
    ['domain', 'victim.LOCALHOST', '/v1'],
    ['path', 'localhost', `/tenant/${VICTIM}/v1`],
    ['PATH', 'localhost', `/tenant/${VICTIM.toUpperCase()}/v1`],
  ]

  async function tenantRows(): Promise<{ entries: number; lastSeq: number; confirmations: number }> {
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined })
    try {
      const [log] = await sql<{ entries: string; last: string | null }[]>`SELECT count(*) AS entries, max(seq) AS last FROM log WHERE tenant = ${VICTIM}`
      const [confirmations] = await sql<{ count: string }[]>`SELECT count(*) AS count FROM confirmations WHERE tenant = ${VICTIM}`
      return { entries: Number(log?.entries), lastSeq: Number(log?.last), confirmations: Number(confirmations?.count) }
    } finally {
      await sql.end()
    }
  }

  t.test('every way to a node call from outside, on every port, is refused and changes nothing', async (t) => {
    const rowsBefore = await tenantRows()
    const leaseBefore = await leaseRowOf(databaseUrl, VICTIM)
    t.ok(leaseBefore !== undefined, 'the tenant is held by a node')
    const ports: [string, number][] = [['HAProxy', client.port]]
    services.forEach((service, index) => {
      ports.push([`node ${index + 1} public`, service.port])
      ports.push([`node ${index + 1} internal`, service.internalPort ?? 0])
    })
    const reached: string[] = []
    let sent = 0
    for (const [call, body] of CALLS) {
      for (const [portName, port] of ports) {
        const attempts: [string, string, string][] = []
        for (const [addressName, host, base] of ADDRESSES) for (const [escapeName, escaped] of ESCAPES) attempts.push([`${addressName}, ${escapeName}`, host, escaped(base, call)])
        attempts.push(['absolute form', 'victim.localhost', `http://victim.localhost/${call}`])
        attempts.push(['absolute form, other case and backslashes', 'VICTIM.localhost', `http://VICTIM.localhost/v1/a\\..\\..\\${call}`])
        attempts.push(['absolute form at the node', 'localhost', `http://127.0.0.1:${port}/${call}`])
        // At once, each on a connection of its own; no answer reached nothing.
        const answers = await Promise.all(
          attempts.map(([, host, target]) =>
            rawExchange(port, rawRequest('POST', target, { Host: host, 'Content-Type': 'application/json' }, body), { waitMs: target.startsWith('http:') ? ABSOLUTE_FORM_WAIT_MS : ANSWER_WAIT_MS }),
          ),
        )
        answers.forEach((answer, index) => {
          const [label, , target] = attempts[index] as [string, string, string]
          if (answer.status !== null && answer.status < 300) reached.push(`${portName}: ${label}: POST ${target} → ${answer.status} ${answer.body.slice(0, 120)}`)
        })
        sent += answers.length
      }
    }
    t.ok(sent > 1000, `${sent} requests sent`)
    t.same(reached, [], 'no request was answered 2xx')
    t.same(await tenantRows(), rowsBefore, 'no log entry written, no confirmation made')
    t.same(await leaseRowOf(databaseUrl, VICTIM), leaseBefore, 'the lease is held by the same node at the same epoch: never released')
  })

  t.test("the tenant is as it was: its projects, the owner's password, not the attacker's", async (t) => {
    const projects = await client.request('GET', '/v1/time/projects', { tenant: VICTIM, query: { token: owner.token, $orderby: 'name' } })
    t.equal(projects.status, 200, "the owner's session still works")
    t.same(
      (projects.json as { name: string }[]).map((project) => project.name),
      ['Kept 1', 'Kept 2', 'Kept 3'],
      'no restore rolled the tenant back',
    )
    const attacker = await client.request('GET', '/v1/auth/login', {
      tenant: VICTIM,
      query: { apikey: TEST_API_KEY },
      headers: { authorization: `Basic ${Buffer.from(`${owner.email}:${ATTACKER_PASSWORD}`).toString('base64')}` },
    })
    t.equal(attacker.status, 401, "the attacker's password does not log in")
    const confirm = await client.request('POST', `/v1/auth/confirm/${CHOSEN_CONFIRMATION}`, {
      query: { apikey: TEST_API_KEY },
      headers: { authorization: `Basic ${Buffer.from(`:${ATTACKER_PASSWORD}`).toString('base64')}` },
    })
    t.equal(confirm.status, 400, "the attacker's confirmation id was never made")
    t.ok((await client.login(VICTIM, owner.email, owner.password)).length > 0, "the owner's password logs in")
  })
}
