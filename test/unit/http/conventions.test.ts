/*
 * The pieces of the HTTP conventions without a server: Accept-Encoding
 * negotiation and which answers are compressed (compression.ts), CORS
 * origins and headers (config.ts, cors.ts), Vary merging (varyHeader.ts)
 * and which incoming request ids are kept (requestIdHeader.ts).
 */
import zlib from 'node:zlib'
import t from 'tap'
import { parseCorsOrigins } from '../../../src/config.js'
import { chooseCoding, compressAnswer, compressionStream, isCompressibleType } from '../../../src/http/compression.js'
import { answerOptions, withCorsHeaders } from '../../../src/http/cors.js'
import { keptRequestId } from '../../../src/http/requestIdHeader.js'
import { withVary } from '../../../src/http/varyHeader.js'

t.test('Accept-Encoding negotiation', async (t) => {
  t.equal(chooseCoding(undefined), null)
  t.equal(chooseCoding(''), null)
  t.equal(chooseCoding('identity'), null)
  t.equal(chooseCoding('gzip'), 'gzip')
  t.equal(chooseCoding('x-gzip'), 'gzip', 'x-gzip is gzip (RFC 9110 §8.4.1.3)')
  t.equal(chooseCoding('gzip, deflate, br'), 'br', 'brotli at equal weight')
  t.equal(chooseCoding('br;q=0.5, gzip;q=0.8'), 'gzip', 'the higher weight')
  t.equal(chooseCoding('BR ; Q=0.9 , gzip;q=0.1'), 'br', 'names and parameters in any case')
  t.equal(chooseCoding('*'), 'br')
  t.equal(chooseCoding('*;q=0.3, br;q=0'), 'gzip', '* for those not named')
  t.equal(chooseCoding('gzip;q=0, br;q=0'), null)
  t.equal(chooseCoding('deflate, zstd'), null, 'codings we do not make')
})

t.test('which answers are compressed', async (t) => {
  for (const type of ['application/json; charset=utf-8', 'application/xml', 'text/csv', 'application/javascript', 'application/problem+json', 'text/html']) {
    t.ok(isCompressibleType(type), type)
  }
  for (const type of ['image/png', 'application/octet-stream', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', undefined]) {
    t.notOk(isCompressibleType(type), String(type))
  }
  const body = JSON.stringify(Array.from({ length: 200 }, (_, index) => ({ id: index, name: `item ${index}` })))
  const json = { status: 200, headers: { 'Content-Type': 'application/json' }, body }
  const br = compressAnswer(json, 'br', 1024, false)
  t.equal(br.headers['Content-Encoding'], 'br')
  t.equal(br.headers.Vary, 'Accept-Encoding')
  t.equal(zlib.brotliDecompressSync(br.body as Buffer).toString(), body)
  t.equal(compressAnswer(json, 'br', 0, false), json, '0: off')
  t.equal(compressAnswer(json, 'br', body.length + 1, false), json, 'below the threshold')
  t.equal(compressAnswer(json, 'br', 1024, true).headers['Content-Encoding'], undefined, 'HEAD')
  t.equal(compressAnswer({ ...json, status: 304 }, 'br', 1024, false).headers['Content-Encoding'], undefined, '304')
  const passedOn = { status: 200, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: Buffer.from(body) }
  t.equal(compressAnswer(passedOn, 'br', 1024, false), passedOn, 'an answer encoded already')
  const png = { status: 200, headers: { 'Content-Type': 'image/png' }, body: Buffer.alloc(5000) }
  t.equal(compressAnswer(png, 'br', 1024, false), png, 'an image')
  const identity = compressAnswer(json, 'identity', 1024, false)
  t.equal(identity.body, body, 'a client taking neither gets the body')
  t.equal(identity.headers.Vary, 'Accept-Encoding', 'and the Vary')
})

t.test('a streamed answer compresses to the same bytes', async (t) => {
  const text = 'time record,'.repeat(10_000)
  for (const coding of ['br', 'gzip'] as const) {
    const stream = compressionStream(coding)
    const chunks: Buffer[] = []
    stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    const done = new Promise((resolve) => stream.on('end', resolve))
    for (let index = 0; index < text.length; index += 4096) stream.write(text.slice(index, index + 4096))
    stream.end()
    await done
    const packed = Buffer.concat(chunks)
    t.equal((coding === 'br' ? zlib.brotliDecompressSync(packed) : zlib.gunzipSync(packed)).toString(), text, coding)
  }
})

t.test('CORS_ORIGINS', async (t) => {
  t.equal(parseCorsOrigins(''), null, 'empty: off')
  t.equal(parseCorsOrigins(' , '), null)
  t.equal(parseCorsOrigins('https://a.example, *'), '*')
  t.same([...(parseCorsOrigins('https://A.example/, http://localhost:5173') as Set<string>)], ['https://a.example', 'http://localhost:5173'], 'lower case, no trailing slash')
  t.throws(() => parseCorsOrigins('a.example'), /not an origin/, 'a host without a scheme')
  t.throws(() => parseCorsOrigins('https://a.example/app'), /not an origin/, 'a path')
})

t.test('CORS headers', async (t) => {
  const origins = parseCorsOrigins('https://app.example')
  const preflight = (origin: string, extra: Record<string, string> = {}) => new Map(Object.entries({ origin, 'access-control-request-method': 'PUT', ...extra }))
  const allowed = answerOptions(origins, preflight('https://APP.example', { 'access-control-request-headers': 'if-match' }))
  t.match(allowed, { 'Access-Control-Allow-Origin': 'https://APP.example', 'Access-Control-Allow-Headers': 'if-match', Vary: 'Origin' }, 'origins compare without case')
  const odd = answerOptions(origins, preflight('https://app.example', { 'access-control-request-headers': 'x-a\r\nx-b: 1' }))
  t.match(odd, { 'Access-Control-Allow-Headers': /Authorization/ }, 'a header list that is not one: the default list')
  t.match(answerOptions(origins, preflight('https://other.example')), { code: 'TL01-1008' })
  t.match(answerOptions(null, preflight('https://app.example')), { code: 'TL01-1008', message: /CORS_ORIGINS/ })
  t.match(answerOptions(origins, new Map([['origin', 'https://app.example']])), { code: 'TL01-9004' }, 'no Access-Control-Request-Method: no preflight')

  const base = { 'Content-Type': 'application/json', Vary: 'Accept-Encoding' }
  t.equal(withCorsHeaders(null, 'https://app.example', base), base, 'off: unchanged')
  t.match(withCorsHeaders(origins, 'https://app.example', base), { 'Access-Control-Allow-Origin': 'https://app.example', Vary: 'Accept-Encoding, Origin', 'Access-Control-Expose-Headers': /ETag/ })
  t.same(withCorsHeaders(origins, undefined, base), { ...base, Vary: 'Accept-Encoding, Origin' }, 'no Origin: only Vary')
  t.same(withCorsHeaders('*', undefined, base), base, '*: nothing varies')
})

t.test('Vary', async (t) => {
  t.same(withVary({}, 'Origin'), { Vary: 'Origin' })
  t.same(withVary({ vary: 'origin' }, 'Origin'), { vary: 'origin' }, 'not twice, whatever the case')
  t.same(withVary({ Vary: '*' }, 'Origin'), { Vary: '*' })
})

t.test('incoming request ids', async (t) => {
  for (const id of ['a', 'abc-123', 'trace.1:2_3', 'x'.repeat(128), '0af7651916cd43dd8448eb211c80319c']) t.equal(keptRequestId(id), id, id.slice(0, 30))
  for (const id of ['', 'x'.repeat(129), 'a b', 'a\tb', 'ä', 'a/b', 'a"b', 'a,b']) t.equal(keptRequestId(id), null, JSON.stringify(id.slice(0, 30)))
})
