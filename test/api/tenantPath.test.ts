/*
 * A tenant by path on the public address (issue 38, item 4):
 * `http://127.0.0.1:<port>/tenant/<urlPrefix>/v1/…` serves what
 * `http://<urlPrefix>.localhost:<port>/v1/…` serves. Everything here goes
 * through Node's global fetch, which cannot reach `*.localhost` and drops a
 * Host header it is given, as a client of the README would: sign-up,
 * confirmation, login, reads and writes, errors, the links of a list page
 * (in the path form, without the token), the change feed as Server-Sent
 * Events (EventSource over fetch) and as a WebSocket, and the OpenAPI
 * document the public /docs page tries calls with. The same answers are
 * compared with the host form's (the test client sends the Host header).
 * With TIMELEDGER_TEST_CLUSTER=1 it runs through HAProxy in front of two
 * nodes (test/cluster/addressing.test.ts checks the routing there).
 */
import { EventSource } from 'eventsource'
import t from 'tap'
import WebSocket from 'ws'
import { startInProcess, TEST_API_KEY } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const origin = `http://127.0.0.1:${client.port}`
const TENANT = 'bypath'
const EMAIL = `owner@${TENANT}.test`
const PASSWORD = 'path-password'

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

async function json(response: Response): Promise<{ status: number; body: unknown; headers: Headers }> {
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // Not JSON: compared as text.
  }
  return { status: response.status, body, headers: response.headers }
}

const byPath = (path: string, init: RequestInit = {}) => fetch(`${origin}/tenant/${TENANT}/v1/${path}`, init).then(json)

let token = ''

t.test('sign-up on the public address, then confirmation and login by path, all with fetch', async (t) => {
  const signup = await fetch(`${origin}/v1/register/signup?apikey=${TEST_API_KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ account: { name: 'By Path Ltd', urlPrefix: TENANT }, owner: { firstName: 'Pat', lastName: 'Path', email: EMAIL, password: PASSWORD } }),
  }).then(json)
  t.equal(signup.status, 201, 'signed up')
  const accountId = (signup.body as { id: string }).id
  const confirmed = await byPath(`auth/confirm/${accountId}?apikey=${TEST_API_KEY}`, { method: 'POST' })
  t.equal(confirmed.status, 200, 'confirmed by path')
  const login = await byPath(`auth/login?apikey=${TEST_API_KEY}`, { headers: { authorization: basic(EMAIL, PASSWORD) } })
  t.equal(login.status, 200, 'logged in by path')
  token = (login.body as { token: string }).token
  t.ok(token.length >= 32, 'a token')
  const hostForm = await client.request('GET', '/v1/users/@self', { tenant: TENANT, query: { token } })
  t.equal(hostForm.status, 200, 'the token of the path form works on the host form: one tenant, one session')
})

t.test('the same answers as the host form: reads, writes, errors', async (t) => {
  const made = await byPath(`time/projects?token=${token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Made by path' }) })
  t.equal(made.status, 201, 'created by path')
  const id = (made.body as { id: string }).id
  for (let index = 1; index <= 4; index += 1) {
    const more = await client.request('POST', '/v1/time/projects', { tenant: TENANT, query: { token }, body: { name: `Made by host ${index}` } })
    t.equal(more.status, 201)
  }
  const cases: [string, string][] = [
    [`time/projects/${id}`, `token=${token}`],
    ['time/projects', `token=${token}&$orderby=name`],
    ['time/projects/$count', `token=${token}`],
    ['users/@self', `token=${token}`],
    ['time/projects/$metadata', `token=${token}`],
    ['time/projects', ''],
    ['time/projects', 'token=not-a-token'],
    ['time/nothing', `token=${token}`],
    [`time/projects/${id}`, `token=${token}&format=xml`],
  ]
  for (const [path, query] of cases) {
    const viaPath = await byPath(`${path}?${query}`)
    const viaHost = await client.request('GET', `/v1/${path}?${query}`, { tenant: TENANT })
    t.equal(viaPath.status, viaHost.status, `${path}?${query.replace(token, '<token>')}: status ${viaHost.status}`)
    t.same(viaPath.body, viaHost.json ?? viaHost.text, `${path}: the same body`)
  }
  const upper = await fetch(`${origin}/tenant/${TENANT.toUpperCase()}/v1/time/projects/${id}?token=${token}`).then(json)
  t.equal(upper.status, 200, 'the name in the path is case folded like a host name')
})

t.test('a name that is no tenant, a path outside /v1, and escapes in the path are refused', async (t) => {
  const nobody = await fetch(`${origin}/tenant/nobody-here/v1/time/projects?token=${token}`).then(json)
  t.equal(nobody.status, 401)
  t.equal((nobody.body as { code: string }).code, 'TL01-1005', 'an unknown tenant, as by host')
  const bad = await fetch(`${origin}/tenant/a.b/v1/time/projects`).then(json)
  t.equal((bad.body as { code: string }).code, 'TL01-1005', 'a name with a dot names no tenant')
  const outside = await fetch(`${origin}/tenant/${TENANT}/docs`).then(json)
  t.equal(outside.status, 404, 'only /v1 below a tenant by path')
  const dots = await fetch(`${origin}/tenant/${TENANT}/v1/time/%2e%2e/%2e%2e/users?token=${token}`).then(json)
  t.equal(dots.status, 404, 'encoded dot segments are refused, not resolved')
  const onTenantHost = await client.request('GET', `/tenant/${TENANT}/v1/time/projects`, { tenant: TENANT, query: { token } })
  t.equal(onTenantHost.status, 404, "a tenant's own host does not take the path form: its paths start with /v1")
})

t.test('Link headers are in the path form, without the token, and lead to the next page', async (t) => {
  const first = await byPath(`time/projects?token=${token}&$orderby=name&$top=2`)
  t.equal(first.status, 200)
  const link = first.headers.get('link') ?? ''
  const next = /<([^>]*)>;\s*rel="next"/.exec(link)?.[1] ?? ''
  t.equal(next, `/tenant/${TENANT}/v1/time/projects?$orderby=name&$top=2&$skip=2`, 'root-relative, by path, no token')
  const followed = await fetch(`${origin}${next}`, { headers: { authorization: `Bearer ${token}` } }).then(json)
  t.equal(followed.status, 200)
  t.same(
    (followed.body as { name: string }[]).map((project) => project.name),
    ['Made by host 3', 'Made by host 4'],
    'the next page',
  )
  const upper = await fetch(`${origin}/tenant/${TENANT.toUpperCase()}/v1/time/projects?token=${token}&$top=1`).then(json)
  t.match(upper.headers.get('link') ?? '', new RegExp(`^</tenant/${TENANT}/v1/time/projects\\?`), 'the link names the tenant as the server knows it')
})

t.test('the change feed by path: Server-Sent Events over fetch, and a WebSocket', async (t) => {
  const source = new EventSource(`${origin}/tenant/${TENANT}/v1/changes?token=${token}&resources=time/projects`)
  t.teardown(() => source.close())
  const sseEvent = new Promise<Record<string, unknown>>((resolve, reject) => {
    source.addEventListener('change', (message) => resolve(JSON.parse((message as MessageEvent<string>).data) as Record<string, unknown>))
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) reject(new Error('the event stream was refused'))
    }
  })
  await new Promise<void>((resolve) => (source.onopen = () => resolve()))
  const socket = new WebSocket(`ws://127.0.0.1:${client.port}/tenant/${TENANT}/v1/changes?token=${token}&resources=time/projects`)
  t.teardown(() => socket.close())
  const wsEvent = new Promise<Record<string, unknown>>((resolve, reject) => {
    socket.once('message', (data) => resolve(JSON.parse(data.toString()) as Record<string, unknown>))
    socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)))
    socket.once('error', reject)
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  const made = await byPath(`time/projects?token=${token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Seen by the feed' }) })
  t.equal(made.status, 201)
  const id = (made.body as { id: string }).id
  const [overSse, overWs] = await Promise.all([sseEvent, wsEvent])
  t.equal(overSse.id, id, 'the event stream by path got the new project')
  t.equal(overWs.id, id, 'the WebSocket by path got it too')
})

t.test('the OpenAPI document: on the public host tenant calls go by path; on a tenant host /v1 stays first', async (t) => {
  const onPublic = await fetch(`${origin}/v1/openapi.json`).then(json)
  const publicServers = (onPublic.body as { servers: { url: string; variables?: Record<string, unknown> }[] }).servers
  t.equal(publicServers[0]?.url, '/tenant/{tenant}/v1', 'the public /docs page tries tenant calls by path')
  t.ok(publicServers[0]?.variables?.tenant !== undefined, 'with the tenant as a variable')
  t.notOk(
    publicServers.some((server) => server.url === '/v1'),
    'the public address itself is not offered for tenant calls',
  )
  const byPathDocument = await byPath('openapi.json').then((answer) => answer.body as { servers: { url: string }[] })
  t.equal(byPathDocument.servers[0]?.url, '/tenant/{tenant}/v1', 'loaded by path: the same as on the public host')
  const onTenant = await client.request('GET', '/v1/openapi.json', { tenant: TENANT })
  const tenantServers = (onTenant.json as { servers: { url: string }[] }).servers.map((server) => server.url)
  t.equal(tenantServers[0], '/v1', "on a tenant's own host its /v1 comes first, as before")
  t.ok(tenantServers.includes('/tenant/{tenant}/v1'), 'the path form is named there too')
})
