/*
 * What health checkers and proxies send, over raw sockets. The admin
 * listener answers HTTP/1.0 (HAProxy's default check: no Host header) on
 * /readyz and /healthz and closes the connection after the answer unless
 * the client asked to keep it; an HTTP/1.1 request without Host, one with
 * two Host headers, and one whose target is a whole URL (absolute form) get
 * 400 TL01-1105. The public listener refuses two Host headers with 400 and
 * closes the connection, and takes at most 48 header fields (its parser
 * holds a request with more unanswered, as it holds any head it cannot
 * read).
 */
import net from 'node:net'
import t from 'tap'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { adminPort } = server.service
const publicPort = server.client.port
await server.client.createTenant('acme')

interface Exchange {
  /** Everything the server sent. */
  received: string
  /** The server closed the connection (rather than the test giving up waiting). */
  closedByServer: boolean
}

/** Sends `request` as it is and collects what comes back until the server closes or `waitMs` passes. */
function exchange(port: number, request: string, waitMs = 1500): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let received = ''
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ received, closedByServer: false })
    }, waitMs)
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
    socket.on('end', () => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ received, closedByServer: true })
    })
    socket.on('error', reject)
    socket.write(request)
  })
}

function bodyOf(received: string): string {
  return received.slice(received.indexOf('\r\n\r\n') + 4)
}

t.test('admin: HTTP/1.0 health checks are answered, and the connection closes after the answer', async (t) => {
  for (const [label, request] of [
    ['readyz without Host', 'GET /readyz HTTP/1.0\r\n\r\n'],
    ['readyz with Host', 'GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n'],
    ['healthz without Host', 'GET /healthz HTTP/1.0\r\n\r\n'],
    ['healthz with Host', 'GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\nUser-Agent: check\r\n\r\n'],
  ]) {
    const answer = await exchange(adminPort, request as string)
    t.match(answer.received, /^HTTP\/1\.[01] 200 OK\r\n/, `${label}: 200`)
    t.ok(answer.closedByServer, `${label}: the server closes the connection`)
    if (label?.startsWith('readyz')) t.same(JSON.parse(bodyOf(answer.received)), { status: 'ready' }, `${label}: the body`)
  }
})

t.test("admin: HAProxy's default check (OPTIONS / HTTP/1.0) gets an answer, not silence", async (t) => {
  const answer = await exchange(adminPort, 'OPTIONS / HTTP/1.0\r\n\r\n')
  t.match(answer.received, /^HTTP\/1\.[01] 401 /, 'refused without the key, but answered')
  t.ok(answer.closedByServer)
})

t.test('admin: HTTP/1.0 with keep-alive keeps the connection for a second request', async (t) => {
  const request = 'GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n'
  const answer = await exchange(adminPort, request + request, 500)
  t.equal(answer.received.match(/HTTP\/1\.[01] 200 OK/g)?.length, 2, 'two answers on one connection')
})

t.test('admin: no Host on HTTP/1.1, two Host headers, a whole URL as target: 400', async (t) => {
  for (const [label, request] of [
    ['HTTP/1.1 without Host', 'GET /readyz HTTP/1.1\r\n\r\n'],
    ['two Host headers', 'GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: example.com\r\n\r\n'],
    ['two Host headers on HTTP/1.0', 'GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\nHost: example.com\r\n\r\n'],
    ['absolute form', 'GET http://127.0.0.1/readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
  ]) {
    const answer = await exchange(adminPort, request as string)
    t.match(answer.received, /^HTTP\/1\.1 400 Bad Request\r\n/, `${label}: 400`)
    t.match(JSON.parse(bodyOf(answer.received)), { status: 400, code: 'TL01-1105' }, `${label}: the error body`)
    t.ok(answer.closedByServer, `${label}: the connection is closed`)
  }
})

t.test('public: two Host headers get 400 and the connection is closed', async (t) => {
  for (const hosts of [
    ['acme.localhost', 'evil.localhost'],
    ['acme.localhost', 'acme.localhost'],
    ['localhost', 'acme.localhost'],
  ]) {
    const request = `GET /v1/time/projects HTTP/1.1\r\n${hosts.map((host) => `Host: ${host}\r\n`).join('')}\r\n`
    const answer = await exchange(publicPort, request)
    t.match(answer.received, /^HTTP\/1\.1 400 Bad Request\r\n/, `${hosts.join(' + ')}: 400`)
    t.match(JSON.parse(bodyOf(answer.received)), { status: 400, code: 'TL01-1105', message: /2 Host headers/ }, `${hosts.join(' + ')}: the error body`)
    t.ok(answer.closedByServer, `${hosts.join(' + ')}: the connection is closed`)
  }
  const single = await exchange(publicPort, 'GET /v1/time/projects HTTP/1.1\r\nHost: acme.localhost\r\n\r\n', 300)
  t.match(single.received, /^HTTP\/1\.1 400 /, 'one Host header reaches the router (400: no token)')
  t.match(JSON.parse(bodyOf(single.received)), { code: 'TL01-1002' })
})

t.test('public: at most 48 header fields; the parser holds a request with more unanswered until its idle timeout (README: "Not answered")', async (t) => {
  const withFields = (count: number) => `GET /v1/time/projects HTTP/1.1\r\nHost: acme.localhost\r\n${Array.from({ length: count - 1 }, (_, index) => `X-Field-${index}: ${index}\r\n`).join('')}\r\n`
  const most = await exchange(publicPort, withFields(48), 500)
  t.match(most.received, /^HTTP\/1\.1 400 /, '48 fields reach the router (400: no token)')
  t.match(JSON.parse(bodyOf(most.received)), { code: 'TL01-1002' })
  const tooMany = await exchange(publicPort, withFields(49), 15_000)
  t.equal(tooMany.received, '', '49 fields: no answer (uWebSockets.js never hands the request over)')
  t.ok(tooMany.closedByServer, '49 fields: the connection is closed by the idle timeout (about 10 s)')
})
