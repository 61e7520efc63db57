/*
 * Content clients stored is never run by a browser from the API's origin:
 * a storage entry or an uploaded file of an active type (HTML, SVG, XML,
 * JavaScript, or any type not known to be passive) comes back as an
 * attachment, every stored body with `Content-Security-Policy: sandbox`,
 * and every answer of both listeners, including errors written before
 * routing and answers to requests the parser refused, with
 * `X-Content-Type-Options: nosniff`.
 */
import net from 'node:net'
import t from 'tap'
import { adminKeyOf, adminRequest } from '../helpers/admin.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess(undefined, { MAX_BODY_BYTES: '1000' })
t.teardown(() => server.stop())
const { token } = await server.client.createTenant('acme')
const { adminPort } = server.service
const adminKey = adminKeyOf(server.dataDir)

const store = (path: string, text: string, contentType: string) =>
  server.client.request('POST', `/v1/storage/${path}`, { tenant: 'acme', query: { token }, rawBody: text, headers: { 'content-type': contentType } })
const read = (path: string) => server.client.request('GET', `/v1/storage/${path}`, { tenant: 'acme', query: { token } })

const ACTIVE: Array<[string, string]> = [
  ['text/html', '<html><script>alert(document.cookie)</script></html>'],
  ['TEXT/HTML; charset=utf-8', '<script>alert(1)</script>'],
  ['application/xhtml+xml', '<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>'],
  ['image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'],
  ['application/xml', '<x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script>'],
  ['text/xml', '<a/>'],
  ['text/javascript', 'alert(1)'],
  ['application/javascript', 'alert(1)'],
  ['application/pdf', '%PDF-1.4'],
  ['application/x-something-new', 'who knows'],
]

t.test('a storage entry of an active or unknown type is a sandboxed attachment', async (t) => {
  for (const [index, [contentType, text]] of ACTIVE.entries()) {
    t.equal((await store(`pages/p${index}`, text, contentType)).status, 201, `${contentType}: stored`)
    const answer = await read(`pages/p${index}`)
    t.equal(answer.status, 200)
    t.equal(answer.text, text, `${contentType}: the text as stored`)
    t.equal(answer.headers['content-type'], contentType, `${contentType}: the stored content type`)
    t.equal(answer.headers['content-disposition'], 'attachment', `${contentType}: an attachment`)
    t.equal(answer.headers['content-security-policy'], 'sandbox', `${contentType}: sandboxed`)
    t.equal(answer.headers['x-content-type-options'], 'nosniff', `${contentType}: not sniffed`)
  }
})

t.test('a storage entry of a passive type is shown inline, sandboxed and not sniffed', async (t) => {
  for (const contentType of ['text/plain', 'application/json', 'text/plain; charset=utf-8', 'image/png']) {
    t.equal((await store('prefs/x', '{"a":1}', contentType)).status < 300, true)
    const answer = await read('prefs/x')
    t.equal(answer.headers['content-type'], contentType)
    t.equal(answer.headers['content-disposition'], undefined, `${contentType}: inline`)
    t.equal(answer.headers['content-security-policy'], 'sandbox', `${contentType}: sandboxed all the same`)
    t.equal(answer.headers['x-content-type-options'], 'nosniff', `${contentType}: not sniffed`)
  }
})

t.test('a file download of an active type is a sandboxed attachment', async (t) => {
  for (const contentType of ['text/html', 'image/svg+xml', 'application/xml', 'text/javascript']) {
    const body = Buffer.from('<script>alert(1)</script>')
    const upload = await server.client.request('POST', '/v1/accounts/@own/logo/upload', {
      tenant: 'acme',
      query: { token, filename: 'logo.html' },
      rawBody: body,
      headers: { 'content-type': contentType },
    })
    t.ok(upload.status === 201 || upload.status === 200, `${contentType}: uploaded`)
    const download = await server.client.request('GET', '/v1/accounts/@own/logo/download', { tenant: 'acme', query: { token } })
    t.equal(download.status, 200)
    t.equal(download.headers['content-type'], contentType)
    t.equal(download.headers['content-disposition'], 'attachment; filename="logo.html"', `${contentType}: an attachment`)
    t.equal(download.headers['content-security-policy'], 'sandbox', `${contentType}: sandboxed`)
    t.equal(download.headers['x-content-type-options'], 'nosniff', `${contentType}: not sniffed`)
  }
})

/** The head of the answer to `request` sent as it is on a fresh connection. */
function rawHead(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let received = ''
    const timer = setTimeout(() => {
      socket.destroy()
      resolve(received)
    }, 2000)
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
      if (received.includes('\r\n\r\n')) {
        clearTimeout(timer)
        socket.destroy()
        resolve(received.slice(0, received.indexOf('\r\n\r\n')))
      }
    })
    socket.on('error', reject)
    socket.write(request)
  })
}

t.test('every answer of the public listener says nosniff', async (t) => {
  const cases: Array<[string, () => Promise<{ status: number; headers: Record<string, unknown> }>, number]> = [
    ['a normal answer', () => server.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token } }), 200],
    ['a HEAD answer', () => server.client.request('HEAD', '/v1/time/projects', { tenant: 'acme', query: { token } }), 405],
    ['an XML answer', () => server.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token, format: 'xml' } }), 200],
    ['a JSONP answer', () => server.client.request('GET', '/v1/time/projects.json', { tenant: 'acme', query: { token, callback: 'cb' } }), 200],
    ['a router error', () => server.client.request('GET', '/v1/no/such/path', { tenant: 'acme', query: { token } }), 404],
    ['no token', () => server.client.request('GET', '/v1/time/projects', { tenant: 'acme' }), 400],
    ['an unknown host (before routing)', () => server.client.request('GET', '/v1/time/projects', { tenant: 'nobody.else' }), 401],
    ['a path outside /v1 (before routing)', () => server.client.request('GET', '/elsewhere', { tenant: 'acme' }), 404],
    ['a malformed path (before routing)', () => server.client.request('GET', '/v1/%zz', { tenant: 'acme' }), 404],
    ['a body over the limit (before reading it)', () => server.client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, rawBody: 'x'.repeat(2000) }), 413],
  ]
  for (const [label, call, status] of cases) {
    const answer = await call()
    t.equal(answer.status, status, `${label}: status`)
    t.equal(answer.headers['x-content-type-options'], 'nosniff', label)
  }
  const twoHosts = await rawHead(server.client.port, 'GET /v1/time/projects HTTP/1.1\r\nHost: acme.localhost\r\nHost: other.localhost\r\n\r\n')
  t.match(twoHosts, /^HTTP\/1\.1 400 /, 'two Host headers (before routing)')
  t.match(twoHosts, /\r\nX-Content-Type-Options: nosniff(\r\n|$)/i, 'two Host headers: nosniff')
})

t.test('every answer of the admin listener says nosniff', async (t) => {
  const cases: Array<[string, string | null, string, number]> = [
    ['health', null, '/healthz', 200],
    ['readiness', null, '/readyz', 200],
    ['metrics', adminKey, '/metrics', 200],
    ['no key', null, '/metrics', 401],
    ['unknown route', adminKey, '/no/such/route', 404],
  ]
  for (const [label, key, path, status] of cases) {
    const answer = await adminRequest(adminPort, 'GET', path, key)
    t.equal(answer.status, status, `${label}: status`)
    t.equal(answer.headers['x-content-type-options'], 'nosniff', label)
  }
  const wrongMethod = await adminRequest(adminPort, 'POST', '/healthz', adminKey)
  t.equal(wrongMethod.status, 405)
  t.equal(wrongMethod.headers['x-content-type-options'], 'nosniff', 'wrong method')
  const malformed = await rawHead(adminPort, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nNo colon here\r\n\r\n')
  t.match(malformed, /^HTTP\/1\.1 400 /, 'a head the parser refuses gets 400')
  t.match(malformed, /\r\nX-Content-Type-Options: nosniff(\r\n|$)/i, 'a head the parser refuses: nosniff')
})
