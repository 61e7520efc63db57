/*
 * A tenant's addresses in a cluster (issues 37 and 38): HAProxy sends every
 * address of a tenant to the one node that holds it — its host in any
 * letter case and `/tenant/<name>/v1/…` on the public host — so none needs
 * a forward; a node that does not hold the tenant forwards both forms, and
 * the holding node answers in the form asked (links by path), the change
 * feed included (a WebSocket and Server-Sent Events, by path, opened on
 * the other node). On the internal listener each credential opens its own
 * part only: the forwarding credential a named tenant's /v1, never
 * /cluster/*, another tenant or the public address; the node credential
 * /cluster/*, never /v1; the secret itself nothing.
 */
import { EventSource } from 'eventsource'
import t from 'tap'
import WebSocket from 'ws'
import type { HttpForwarder } from '../../src/cluster/httpForwarder.js'
import { clusterCredentials, FORWARDED_CREDENTIAL_HEADER, FORWARDED_TENANT_HEADER, NODE_CREDENTIAL_HEADER } from '../../src/http/clusterCredentials.js'
import { startInProcessCluster, TEST_CLUSTER_SECRET } from '../helpers/cluster.js'
import { rawExchange, rawRequest } from '../helpers/rawHttp.js'
import { tempDataDir } from '../helpers/server.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  const cluster = await startInProcessCluster(tempDataDir('addressing'))
  t.teardown(() => cluster.stop())
  const { client, services } = cluster
  const TENANTS = ['north', 'south', 'east', 'west']
  const tokens = new Map<string, string>()
  for (const tenant of TENANTS) {
    tokens.set(tenant, (await client.createTenant(tenant)).token)
    // Through HAProxy by host: the tenant settles on the node HAProxy sends its host to.
    const made = await client.request('POST', '/v1/time/projects', { tenant, query: { token: tokens.get(tenant) ?? '' }, body: { name: `${tenant} project` } })
    if (made.status !== 201) throw new Error(`no project in ${tenant}: ${made.text}`)
  }
  const forwards = () => services.map(({ services: node }) => (node.forwarder as HttpForwarder | null)?.forwards ?? 0)
  const holderOf = (tenant: string) => services.findIndex(({ services: node }) => [...node.registry.active()].some((actor) => actor.tenant === tenant))

  t.test('HAProxy sends every address of a tenant to its node: any letter case, and by path', async (t) => {
    const before = forwards()
    for (const tenant of TENANTS) {
      const token = tokens.get(tenant) ?? ''
      const hosts = [`${tenant.toUpperCase()}.localhost`, `${tenant}.LOCALHOST:${client.port}`, `${tenant[0]?.toUpperCase()}${tenant.slice(1)}.LocalHost`]
      for (const host of hosts) {
        const answer = await rawExchange(client.port, rawRequest('GET', `/v1/time/projects?token=${token}`, { Host: host }))
        t.equal(answer.status, 200, `${host}`)
      }
      for (const name of [tenant, tenant.toUpperCase()]) {
        const answer = await fetch(`http://127.0.0.1:${client.port}/tenant/${name}/v1/time/projects?token=${token}`)
        t.equal(answer.status, 200, `/tenant/${name}/v1 through HAProxy`)
        t.same(
          ((await answer.json()) as { name: string }[]).map((project) => project.name),
          [`${tenant} project`],
        )
      }
    }
    t.same(forwards(), before, 'no node forwarded: HAProxy hashed each address to the node holding its tenant')
    t.ok(new Set(TENANTS.map(holderOf)).size > 1, 'the tenants are spread over both nodes (else this would prove little)')
  })

  t.test('HAProxy answers 400 to a head of more than 48 header fields, which the nodes would leave unanswered', async (t) => {
    const token = tokens.get('north') ?? ''
    // rawRequest adds Connection: close to Host and the padding fields.
    const headWith = (fields: number) => {
      const headers: Record<string, string> = { Host: 'north.localhost' }
      for (let at = 0; at < fields - 2; at += 1) headers[`X-Pad-${at}`] = 'x'
      return rawRequest('GET', `/v1/time/projects?token=${token}`, headers)
    }
    t.equal((await rawExchange(client.port, headWith(48))).status, 200, '48 fields are served')
    t.equal((await rawExchange(client.port, headWith(49))).status, 400, '49 fields: 400 from HAProxy, at once')
  })

  t.test('a node that does not hold the tenant forwards both forms; the answer keeps the form asked', async (t) => {
    for (const tenant of TENANTS) {
      const token = tokens.get(tenant) ?? ''
      const other = services[1 - holderOf(tenant)]
      if (other === undefined) throw new Error('two nodes')
      const before = forwards()
      const byPath = await fetch(`http://127.0.0.1:${other.port}/tenant/${tenant.toUpperCase()}/v1/time/projects?token=${token}&$top=1&$orderby=name`)
      t.equal(byPath.status, 200, `${tenant} by path on the other node`)
      t.equal(byPath.headers.get('link'), `</tenant/${tenant}/v1/time/projects?$top=1&$orderby=name&$skip=1>; rel="next"`, 'the link by path, without the token')
      const byHost = await rawExchange(other.port, rawRequest('GET', `/v1/time/projects?token=${token}&$top=1`, { Host: `${tenant.toUpperCase()}.localhost` }))
      t.equal(byHost.status, 200, `${tenant} by host in upper case on the other node`)
      t.match(byHost.text, /\r\nlink: <\/v1\/time\/projects\?\$top=1&\$skip=1>; rel="next"\r\n/i, 'the link by host, the query as written')
      const after = forwards()
      t.equal((after[1 - holderOf(tenant)] ?? 0) - (before[1 - holderOf(tenant)] ?? 0), 2, 'both were forwarded')
    }
  })

  t.test('the change feed by path, opened on the node that does not hold the tenant', async (t) => {
    const tenant = TENANTS[0] as string
    const token = tokens.get(tenant) ?? ''
    const other = services[1 - holderOf(tenant)]
    if (other === undefined) throw new Error('two nodes')
    const feedUrl = `127.0.0.1:${other.port}/tenant/${tenant}/v1/changes?token=${token}&resources=time/projects`
    const source = new EventSource(`http://${feedUrl}`)
    t.teardown(() => source.close())
    const sseEvent = new Promise<{ id: string }>((resolve) => source.addEventListener('change', (message) => resolve(JSON.parse((message as MessageEvent<string>).data) as { id: string })))
    await new Promise<void>((resolve, reject) => {
      source.onopen = () => resolve()
      source.onerror = () => reject(new Error('the event stream was refused'))
    })
    const socket = new WebSocket(`ws://${feedUrl}`)
    t.teardown(() => socket.close())
    const wsEvent = new Promise<{ id: string }>((resolve) => socket.once('message', (data) => resolve(JSON.parse(data.toString()) as { id: string })))
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve())
      socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)))
    })
    const made = await client.request('POST', '/v1/time/projects', { tenant, query: { token }, body: { name: 'seen on the other node' } })
    t.equal(made.status, 201)
    const [overSse, overWs] = await Promise.all([sseEvent, wsEvent])
    t.equal(overSse.id, made.json.id, 'Server-Sent Events by path, forwarded')
    t.equal(overWs.id, made.json.id, 'a WebSocket by path, forwarded')
  })

  t.test('on the internal listener each credential opens its own part only', async (t) => {
    const credentials = clusterCredentials(TEST_CLUSTER_SECRET)
    const tenant = TENANTS[0] as string
    const token = tokens.get(tenant) ?? ''
    const holder = services[holderOf(tenant)]
    if (holder?.internalPort === null || holder === undefined) throw new Error('no holder')
    const internal = holder.internalPort ?? 0
    const forwarded = { [FORWARDED_CREDENTIAL_HEADER]: credentials.forwarded, [FORWARDED_TENANT_HEADER]: tenant }
    const node = { [NODE_CREDENTIAL_HEADER]: credentials.node }
    const send = (method: string, target: string, headers: Record<string, string>, body = '') => rawExchange(internal, rawRequest(method, target, headers, body))

    t.equal((await send('GET', `/v1/time/projects?token=${token}`, { Host: `${tenant}.localhost`, ...forwarded })).status, 200, 'forwarded: the named tenant by host')
    t.equal((await send('GET', `/tenant/${tenant}/v1/time/projects?token=${token}`, { Host: 'localhost', ...forwarded })).status, 200, 'forwarded: the named tenant by path')
    for (const [label, target, host] of [
      ['another tenant by host', `/v1/time/projects?token=${token}`, `${TENANTS[1]}.localhost`],
      ['another tenant by path', `/tenant/${TENANTS[1]}/v1/time/projects?token=${token}`, 'localhost'],
      ['the public address', '/v1/register/checkurl?url=x', 'localhost'],
      ['outside /v1', '/docs', `${tenant}.localhost`],
      ['a cluster call', `/cluster/tenants/${tenant}/release`, `${tenant}.localhost`],
    ]) {
      const answer = await send('POST', target as string, { Host: host as string, ...forwarded })
      t.equal(answer.status, 403, `forwarded: ${label} is refused`)
    }
    t.equal((await send('GET', `/v1/time/projects?token=${token}`, { Host: `${tenant}.localhost`, ...node })).status, 403, 'the node credential does not open /v1')
    t.equal((await send('POST', `/cluster/tenants/${tenant}/nothing`, { Host: 'localhost', ...node })).status, 404, 'the node credential opens /cluster/* (an unknown call: 404)')
    const withSecret = await send('POST', `/cluster/tenants/${tenant}/release`, { Host: 'localhost', 'X-TimeLedger-Cluster': TEST_CLUSTER_SECRET, [NODE_CREDENTIAL_HEADER]: TEST_CLUSTER_SECRET })
    t.equal(withSecret.status, 403, 'the secret itself opens nothing')
    t.ok(holderOf(tenant) >= 0, 'the tenant is still held (nothing released it)')
  })
}
