/*
 * The HTTP conventions a client expects, over HTTP on real servers:
 *
 *  - CORS: off by default (a preflight gets 403 saying CORS_ORIGINS is not
 *    set, an OPTIONS that is no preflight 405, answers carry no
 *    Access-Control headers); with CORS_ORIGINS a preflight is answered 204
 *    without a token, an origin not listed gets 403, and every answer to an
 *    allowed origin (errors too) carries Allow-Origin, Expose-Headers and
 *    Vary: Origin; `*` allows any origin without Vary;
 *  - compression: brotli or gzip by Accept-Encoding (q-values, brotli at
 *    equal weight), the bytes the same once decompressed, Vary:
 *    Accept-Encoding; small answers, identity-only clients and
 *    COMPRESSION_MIN_BYTES=0 get the answer as it is;
 *  - 413 TL01-9006 for a body over MAX_BODY_BYTES, 415 TL01-9005 for a body
 *    of an unsupported type or with a Content-Encoding; a body without a
 *    Content-Type is still read as JSON;
 *  - X-Request-Id: a sane incoming id is kept and echoed, anything else is
 *    replaced by a fresh one.
 */
import net from 'node:net'
import zlib from 'node:zlib'
import t, { type Test } from 'tap'
import type { TestResponse } from '../helpers/http.js'
import { startInProcess } from '../helpers/server.js'

const APP_ORIGIN = 'https://app.example.com'

const plain = await startInProcess()
const open = await startInProcess(undefined, { CORS_ORIGINS: `${APP_ORIGIN}, http://localhost:5173/`, COMPRESSION_MIN_BYTES: '0', MAX_BODY_BYTES: '4096' })
const anyOrigin = await startInProcess(undefined, { CORS_ORIGINS: '*' })
t.teardown(async () => {
  await plain.stop()
  await open.stop()
  await anyOrigin.stop()
})

const { token } = await plain.client.createTenant('conv')
const openToken = (await open.client.createTenant('conv')).token
const anyToken = (await anyOrigin.client.createTenant('conv')).token

/** Enough projects that their list is well over the default threshold (1 KiB). */
const batch = Array.from({ length: 40 }, (_, index) => ({ id: `p${index}`, method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: `Project ${index} of the conventions test` }) }))
const filled = await plain.client.request('POST', '/v1/batch', { tenant: 'conv', query: { token }, body: batch })
if (filled.status !== 200) throw new Error(`batch: ${filled.status} ${filled.text}`)

function expectError(t: Test, response: TestResponse, status: number, code: string, what: string): void {
  t.equal(response.status, status, `${what}: status ${status}`)
  t.equal(response.json?.code, code, `${what}: code ${code}`)
  t.type(response.json?.message, 'string', `${what}: a message`)
}

/** Writes `request` on a new socket; what came back, and whether the server closed the connection (within 2 s). */
function rawExchange(port: number, request: string): Promise<{ received: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request))
    let received = ''
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ received, closedByServer: false })
    }, 2000)
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
    socket.on('error', () => undefined)
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ received, closedByServer: true })
    })
  })
}

const preflightHeaders = (origin: string) => ({ origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' })

t.test('CORS off by default', async (t) => {
  const preflight = await plain.client.request('OPTIONS', '/v1/time/projects', { tenant: 'conv', headers: preflightHeaders(APP_ORIGIN) })
  expectError(t, preflight, 403, 'TL01-1008', 'a preflight')
  t.match(preflight.json.message, /CORS_ORIGINS/, 'the message names the setting')
  t.equal(preflight.headers['access-control-allow-origin'], undefined, 'no Allow-Origin')

  const options = await plain.client.request('OPTIONS', '/v1/time/projects', { tenant: 'conv' })
  expectError(t, options, 405, 'TL01-9004', 'an OPTIONS that is no preflight')
  t.match(options.headers.allow, /GET/, 'Allow lists the methods')
  const withBody = await plain.client.request('OPTIONS', '/v1/time/projects', { tenant: 'conv', rawBody: '{"name":"x"}' })
  expectError(t, withBody, 405, 'TL01-9004', 'an OPTIONS with a body (not read)')
  const raw = await rawExchange(plain.client.port, 'OPTIONS /v1/time/projects HTTP/1.1\r\nHost: conv.localhost\r\nContent-Length: 5\r\n\r\nhello')
  t.match(raw.received, /^HTTP\/1\.1 405 /, 'over a raw socket: 405')
  t.equal(raw.received.match(/HTTP\/1\.1 /g)?.length, 1, 'one answer: the unread body is not taken for a request')
  t.ok(raw.closedByServer, 'and the connection is closed')

  const list = await plain.client.request('GET', '/v1/time/projects', { tenant: 'conv', query: { token }, headers: { origin: APP_ORIGIN } })
  t.equal(list.status, 200)
  t.equal(list.headers['access-control-allow-origin'], undefined, 'an answer to another origin has no CORS headers')
  t.notMatch(list.headers.vary ?? '', /Origin/, 'nor Vary: Origin')
})

t.test('CORS with a list of origins', async (t) => {
  const preflight = await open.client.request('OPTIONS', '/v1/time/projects', { tenant: 'conv', headers: preflightHeaders(APP_ORIGIN) })
  t.equal(preflight.status, 204, 'a preflight is answered 204 without a token')
  t.equal(preflight.text, '', 'without a body')
  t.equal(preflight.headers['access-control-allow-origin'], APP_ORIGIN, 'the origin allowed')
  t.match(preflight.headers['access-control-allow-methods'], /POST/, 'the methods')
  t.match(preflight.headers['access-control-allow-methods'], /PATCH/, 'PATCH among them')
  t.equal(preflight.headers['access-control-allow-headers'], 'authorization, content-type', 'the headers asked for')
  t.equal(preflight.headers['access-control-max-age'], '600', 'a max age')
  t.match(preflight.headers.vary, /Origin/, 'Vary: Origin')

  const second = await open.client.request('OPTIONS', '/v1/time/projects', { tenant: 'conv', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET' } })
  t.equal(second.status, 204, 'the second origin of the list (written with a trailing slash in the setting)')
  t.match(second.headers['access-control-allow-headers'], /Authorization/, 'without a request for headers: the ones this API reads')

  const stranger = await open.client.request('OPTIONS', '/v1/time/projects', { tenant: 'conv', headers: preflightHeaders('https://evil.example.net') })
  expectError(t, stranger, 403, 'TL01-1008', 'an origin not listed')
  t.match(stranger.json.message, /evil\.example\.net/, 'the message names the origin')

  const list = await open.client.request('GET', '/v1/time/projects', { tenant: 'conv', query: { token: openToken }, headers: { origin: APP_ORIGIN } })
  t.equal(list.status, 200)
  t.equal(list.headers['access-control-allow-origin'], APP_ORIGIN, 'the answer allows the origin')
  for (const name of ['X-Request-Id', 'ETag', 'X-Total-Count', 'Link', 'RateLimit-Remaining', 'Content-Disposition']) {
    t.match(list.headers['access-control-expose-headers'], new RegExp(`\\b${name}\\b`), `exposes ${name}`)
  }
  t.match(list.headers.vary, /\bOrigin\b/, 'Vary: Origin')

  const refused = await open.client.request('GET', '/v1/time/projects', { tenant: 'conv', headers: { origin: APP_ORIGIN } })
  expectError(t, refused, 400, 'TL01-1002', 'no token')
  t.equal(refused.headers['access-control-allow-origin'], APP_ORIGIN, 'an error answer is readable by the app too')

  const other = await open.client.request('GET', '/v1/time/projects', { tenant: 'conv', query: { token: openToken }, headers: { origin: 'https://evil.example.net' } })
  t.equal(other.headers['access-control-allow-origin'], undefined, 'another origin is not allowed')
  t.match(other.headers.vary, /\bOrigin\b/, 'but the answer says it varies by Origin')
})

t.test('CORS for any origin', async (t) => {
  const preflight = await anyOrigin.client.request('OPTIONS', '/v1/time/projects/abc', { tenant: 'conv', headers: preflightHeaders('https://whoever.example') })
  t.equal(preflight.status, 204)
  t.equal(preflight.headers['access-control-allow-origin'], '*')
  const list = await anyOrigin.client.request('GET', '/v1/time/projects', { tenant: 'conv', query: { token: anyToken }, headers: { origin: 'https://whoever.example' } })
  t.equal(list.headers['access-control-allow-origin'], '*')
  t.notMatch(list.headers.vary ?? '', /Origin/, 'the same answer for every origin: no Vary: Origin')
})

t.test('compression', async (t) => {
  const query = { token, $top: 100 }
  const identity = await plain.client.request('GET', '/v1/time/projects', { tenant: 'conv', query })
  t.equal(identity.headers['content-encoding'], undefined, 'no Accept-Encoding: as it is')
  t.ok(identity.body.byteLength > 2048, `a list of ${identity.body.byteLength} bytes`)
  t.match(identity.headers.vary, /Accept-Encoding/, 'Vary: Accept-Encoding even when not compressed')

  const brotli = await plain.client.request('GET', '/v1/time/projects', { tenant: 'conv', query, headers: { 'accept-encoding': 'gzip, deflate, br' } })
  t.equal(brotli.headers['content-encoding'], 'br', 'brotli preferred at equal weight')
  t.match(brotli.headers.vary, /Accept-Encoding/)
  t.same(zlib.brotliDecompressSync(brotli.body), identity.body, 'the same bytes once decompressed')
  t.ok(brotli.body.byteLength < identity.body.byteLength / 3, `${brotli.body.byteLength} bytes instead of ${identity.body.byteLength}`)

  const gzip = await plain.client.request('GET', '/v1/time/projects', { tenant: 'conv', query, headers: { 'accept-encoding': 'br;q=0.5, gzip' } })
  t.equal(gzip.headers['content-encoding'], 'gzip', 'q-values honoured')
  t.same(zlib.gunzipSync(gzip.body), identity.body)

  const anyCoding = await plain.client.request('GET', '/v1/time/projects', { tenant: 'conv', query, headers: { 'accept-encoding': '*' } })
  t.equal(anyCoding.headers['content-encoding'], 'br', '* takes any coding')
  const refused = await plain.client.request('GET', '/v1/time/projects', { tenant: 'conv', query, headers: { 'accept-encoding': 'gzip;q=0, br;q=0, identity' } })
  t.equal(refused.headers['content-encoding'], undefined, 'codings refused with q=0')
  t.same(refused.body, identity.body)

  const xml = await plain.client.request('GET', '/v1/time/projects', { tenant: 'conv', query: { ...query, format: 'xml' }, headers: { 'accept-encoding': 'gzip' } })
  t.equal(xml.headers['content-encoding'], 'gzip', 'XML too')
  t.match(zlib.gunzipSync(xml.body).toString(), /^<\?xml/)

  const small = await plain.client.request('GET', '/v1/time/nothing', { tenant: 'conv', query: { token }, headers: { 'accept-encoding': 'br' } })
  t.equal(small.status, 404)
  t.ok(small.body.byteLength < 1024, `an error body (${small.body.byteLength} bytes)`)
  t.equal(small.headers['content-encoding'], undefined, 'below the threshold: as it is')
  t.equal(JSON.parse(small.text).code, 'TL01-9003')

  const off = await open.client.request('GET', '/v1/time/projects', { tenant: 'conv', query: { token: openToken }, headers: { 'accept-encoding': 'br, gzip' } })
  t.equal(off.status, 200)
  t.equal(off.headers['content-encoding'], undefined, 'COMPRESSION_MIN_BYTES=0: off')
  t.notMatch(off.headers.vary ?? '', /Accept-Encoding/)
})

t.test('a compressed object carries its ETag weak, which If-None-Match still matches', async (t) => {
  const created = await plain.client.request('POST', '/v1/time/projects', { tenant: 'conv', query: { token }, body: { name: 'Long', note: 'a long note. '.repeat(200) } })
  t.equal(created.status, 201)
  const path = `/v1/time/projects/${created.json.id as string}`
  const asItIs = await plain.client.request('GET', path, { tenant: 'conv', query: { token } })
  t.match(asItIs.headers.etag, /^"/, 'strong when the bytes are sent as they are')
  const encoded = await plain.client.request('GET', path, { tenant: 'conv', query: { token }, headers: { 'accept-encoding': 'br' } })
  t.equal(encoded.headers['content-encoding'], 'br', 'over the threshold: compressed')
  t.equal(encoded.headers.etag, `W/${asItIs.headers.etag as string}`, 'weak when encoded: other bytes, the same representation')
  const notModified = await plain.client.request('GET', path, { tenant: 'conv', query: { token }, headers: { 'accept-encoding': 'br', 'if-none-match': encoded.headers.etag as string } })
  t.equal(notModified.status, 304, 'If-None-Match compares weakly')
})

t.test('413 for a body over the limit, 415 for a type that is not understood', async (t) => {
  const big = await open.client.request('POST', '/v1/time/projects', { tenant: 'conv', query: { token: openToken }, rawBody: `{"name":"${'x'.repeat(5000)}"}` })
  expectError(t, big, 413, 'TL01-9006', 'a body over MAX_BODY_BYTES')
  t.match(big.json.message, /4096/, 'the message says the limit')

  const csv = await plain.client.request('POST', '/v1/time/projects', { tenant: 'conv', query: { token }, rawBody: 'name\nX', headers: { 'content-type': 'text/csv' } })
  expectError(t, csv, 415, 'TL01-9005', 'a CSV body')
  const form = await plain.client.request('POST', '/v1/time/projects', { tenant: 'conv', query: { token }, rawBody: 'name=X', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  expectError(t, form, 415, 'TL01-9005', 'a form body (what curl -d sends)')
  t.match(form.json.message, /application\/json/, 'the message says what to send')

  const packed = zlib.gzipSync(JSON.stringify({ name: 'Packed' }))
  const encoded = await plain.client.request('POST', '/v1/time/projects', { tenant: 'conv', query: { token }, rawBody: packed, headers: { 'content-encoding': 'gzip' } })
  expectError(t, encoded, 415, 'TL01-9005', 'a gzip-encoded body')
  t.equal(encoded.headers['accept-encoding'], 'identity', 'the answer says to send it uncompressed')

  const untyped = await plain.client.request('POST', '/v1/time/projects', { tenant: 'conv', query: { token }, rawBody: '{"name":"Untyped"}', headers: { 'content-type': '' } })
  t.equal(untyped.status, 201, 'a body without Content-Type is read as JSON')
})

t.test('X-Request-Id', async (t) => {
  const kept = await plain.client.request('GET', '/v1/time/projects', { tenant: 'conv', query: { token }, headers: { 'x-request-id': 'client-7f3a.b_c:9' } })
  t.equal(kept.headers['x-request-id'], 'client-7f3a.b_c:9', 'a sane id is kept')
  const error = await plain.client.request('GET', '/v1/time/nothing', { tenant: 'conv', query: { token }, headers: { 'x-request-id': 'trace-404' } })
  t.equal(error.status, 404)
  t.equal(error.headers['x-request-id'], 'trace-404', 'on an error answer too')

  const fresh = await plain.client.request('GET', '/v1/time/projects', { tenant: 'conv', query: { token } })
  const freshId = fresh.headers['x-request-id'] as string
  t.match(freshId, /^[\w-]+-[0-9a-z]+$/, 'without one: a fresh id')
  for (const insane of ['has space', 'x'.repeat(129), 'quote"d', 'semi;colon']) {
    const replaced = await plain.client.request('GET', '/v1/time/projects', { tenant: 'conv', query: { token }, headers: { 'x-request-id': insane } })
    t.not(replaced.headers['x-request-id'], insane, `'${insane.slice(0, 20)}' is replaced`)
    t.match(replaced.headers['x-request-id'], /^[\w-]+-[0-9a-z]+$/, 'by a fresh id')
  }
})
