/*
 * Every error answer honours the format the request asked for, wherever
 * the query is known: XML by `format=xml` or `Accept`, JSONP by
 * `.json?callback=`, status 200 by `suppress_response_code=true` — for
 * errors found before routing (unknown host, a path outside /v1, a
 * malformed path, a body over the limit, declared or streamed) as for the
 * router's. XML error bodies carry `constraintViolations`, one
 * `constraintViolation` element per violation.
 */
import http from 'node:http'
import { XMLParser } from 'fast-xml-parser'
import t, { type Test } from 'tap'
import type { TestResponse } from '../helpers/http.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const { token } = await client.createTenant('fmt')

const xmlParser = new XMLParser({ ignoreAttributes: true, parseTagValue: false })

interface ErrorXml {
  status: string
  code: string
  message: string
  constraintViolation: unknown
  constraintViolations: '' | { constraintViolation: Record<string, string> | Record<string, string>[] }
}

/** Checks an XML error answer; returns its `<error>` element. */
function expectXmlError(t: Test, response: TestResponse, httpStatus: number, status: number, code: string): ErrorXml {
  t.equal(response.status, httpStatus, `HTTP status ${httpStatus}`)
  t.match(response.headers['content-type'], /^application\/xml/, 'XML content type')
  t.match(response.text, /^<\?xml[^>]*><error>/, 'an XML error document')
  const error = (xmlParser.parse(response.text) as { error: ErrorXml }).error
  t.equal(error.status, String(status), 'status in the body')
  t.equal(error.code, code, `code ${code}`)
  t.type(error.message, 'string')
  t.ok('constraintViolation' in error, 'constraintViolation element')
  t.ok('constraintViolations' in error, 'constraintViolations element')
  return error
}

/** A JSONP error answer `cb({...});`; returns the error object. */
function expectJsonpError(t: Test, response: TestResponse, httpStatus: number, status: number, code: string): Record<string, unknown> {
  t.equal(response.status, httpStatus, `HTTP status ${httpStatus}`)
  t.match(response.headers['content-type'], /javascript/, 'JavaScript content type')
  const match = /^cb\((.*)\);$/s.exec(response.text)
  t.ok(match, `a JSONP call: ${response.text.slice(0, 80)}`)
  const error = JSON.parse(match?.[1] ?? '{}') as Record<string, unknown>
  t.match(error, { status, code, constraintViolation: null, constraintViolations: [] })
  return error
}

/** A POST whose body is streamed in chunks without a Content-Length, so only the bytes received can exceed the limit. */
function streamedPost(path: string, query: string, bytes: number): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port: client.port, method: 'POST', path: `${path}?${query}`, headers: { host: 'fmt.localhost', 'content-type': 'application/json' }, agent: false },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => {
          const body = Buffer.concat(chunks)
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text: body.toString('utf8'), body, json: undefined })
        })
      },
    )
    request.on('error', reject)
    const chunk = Buffer.alloc(64 * 1024, 'x')
    let sent = 0
    const writeMore = () => {
      while (sent < bytes) {
        sent += chunk.length
        if (!request.write(chunk)) {
          request.once('drain', writeMore)
          return
        }
      }
      request.end()
    }
    writeMore()
  })
}

t.test('a body over the limit', async (t) => {
  const big = `{"name":"${'x'.repeat(2 * 1024 * 1024)}"}`
  const declared = await client.request('POST', '/v1/time/projects', { tenant: 'fmt', query: { token, suppress_response_code: true, format: 'xml' }, rawBody: big })
  expectXmlError(t, declared, 200, 413, 'TL01-9006')
  const accept = await client.request('POST', '/v1/time/projects', { tenant: 'fmt', query: { token }, rawBody: big, headers: { accept: 'application/xml' } })
  expectXmlError(t, accept, 413, 413, 'TL01-9006')
  const jsonp = await client.request('POST', '/v1/time/projects.json', { tenant: 'fmt', query: { token, callback: 'cb' }, rawBody: big })
  expectJsonpError(t, jsonp, 413, 413, 'TL01-9006')
  const plain = await client.request('POST', '/v1/time/projects', { tenant: 'fmt', query: { token }, rawBody: big })
  t.equal(plain.status, 413, 'without a format: JSON with the real status')
  t.match(plain.json, { status: 413, code: 'TL01-9006', constraintViolations: [] })

  const streamed = await streamedPost('/v1/time/projects', `token=${token}&format=xml&suppress_response_code=true`, 2 * 1024 * 1024)
  expectXmlError(t, streamed, 200, 413, 'TL01-9006')
})

t.test('an unknown host', async (t) => {
  const foreign = { host: 'example.org' }
  const xml = await client.request('GET', '/v1/time/projects', { query: { format: 'xml' }, headers: foreign })
  expectXmlError(t, xml, 401, 401, 'TL01-1005')
  const suppressed = await client.request('GET', '/v1/time/projects', { query: { format: 'xml', suppress_response_code: true }, headers: foreign })
  expectXmlError(t, suppressed, 200, 401, 'TL01-1005')
  const jsonp = await client.request('GET', '/v1/time/projects.json', { query: { callback: 'cb', suppress_response_code: true }, headers: foreign })
  expectJsonpError(t, jsonp, 200, 401, 'TL01-1005')
  const accept = await client.request('GET', '/v1/time/projects', { headers: { ...foreign, accept: 'text/xml' } })
  expectXmlError(t, accept, 401, 401, 'TL01-1005')
})

t.test('a path outside /v1 and a malformed path', async (t) => {
  const outside = await client.request('GET', '/v2/time/projects', { tenant: 'fmt', query: { token, format: 'xml' } })
  expectXmlError(t, outside, 404, 404, 'TL01-9003')
  const jsonp = await client.request('GET', '/nothing.json', { tenant: 'fmt', query: { token, callback: 'cb', suppress_response_code: true } })
  expectJsonpError(t, jsonp, 200, 404, 'TL01-9003')
  const malformed = await client.request('GET', '/v1/time/%ZZ', { tenant: 'fmt', query: { token, format: 'xml' } })
  expectXmlError(t, malformed, 404, 404, 'TL01-9003')
  const malformedJsonp = await client.request('GET', '/v1/time/%ZZ.json', { tenant: 'fmt', query: { token, callback: 'cb' } })
  expectJsonpError(t, malformedJsonp, 404, 404, 'TL01-9003')
  const badCallback = await client.request('GET', '/v2/x.json', { tenant: 'fmt', query: { callback: 'alert(1)' } })
  t.equal(badCallback.status, 400, 'a callback that is no identifier is refused, before routing too')
  t.match(badCallback.json, { code: 'TL01-1105', message: /callback/ })
})

t.test('errors of the router', async (t) => {
  const unknownPath = await client.request('GET', '/v1/time/nothing', { tenant: 'fmt', query: { token, format: 'xml', suppress_response_code: true } })
  expectXmlError(t, unknownPath, 200, 404, 'TL01-9003')
  const noToken = await client.request('GET', '/v1/time/projects.json', { tenant: 'fmt', query: { callback: 'cb' } })
  expectJsonpError(t, noToken, 400, 400, 'TL01-1002')
})

t.test('XML error bodies carry constraintViolations', async (t) => {
  const invalid = await client.request('POST', '/v1/time/projects', { tenant: 'fmt', query: { token, format: 'xml' }, body: { name: 'x', code: 'c'.repeat(21) } })
  const error = expectXmlError(t, invalid, 412, 412, 'TL01-1104')
  t.match(error.constraintViolation, { entityType: 'Project', field: 'code', constraint: 'Size' }, 'the first violation')
  const listed = error.constraintViolations === '' ? [] : [error.constraintViolations.constraintViolation].flat()
  t.equal(listed.length, 1, 'one constraintViolation element per violation')
  t.match(listed[0], { entityType: 'Project', field: 'code', constraint: 'Size', message: String })
  const json = await client.request('POST', '/v1/time/projects', { tenant: 'fmt', query: { token }, body: { name: 'x', code: 'c'.repeat(21) } })
  t.equal(json.json.constraintViolations.length, listed.length, 'as many as in JSON')

  const none = await client.request('GET', '/v1/time/projects/42', { tenant: 'fmt', query: { token, format: 'xml' } })
  const empty = expectXmlError(t, none, 404, 404, 'TL01-1101')
  t.equal(empty.constraintViolations, '', 'an empty constraintViolations element when there is none')
  t.match(none.text, /<constraintViolations><\/constraintViolations>/)
})
