/*
 * Regression cases for what the fuzzers found, each pinned on its own:
 * XML bodies the parser refuses by throwing (nesting past its limit, an
 * element named `__proto__`) answered 500 and now answer 400 TL01-1105;
 * a HEAD answer carried the body, which a keep-alive client then read as
 * its next answer, and now has none while the connection keeps serving;
 * a date past what a JavaScript Date holds was stored and then broke every
 * XML answer that showed it (500), and is now refused with 400.
 */
import net from 'node:net'
import t from 'tap'
import { api } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const owner = await server.client.createTenant('hostile')
const a = api(server.client, 'hostile', owner.token)

const postXml = (xml: string) => a.call('POST', 'time/projects', { rawBody: xml, headers: { 'content-type': 'application/xml' } })

t.test('XML nested past the parser limit is a 400, not a 500', async (t) => {
  const response = await postXml(`${'<a>'.repeat(50_000)}x${'</a>'.repeat(50_000)}`)
  t.equal(response.status, 400)
  t.equal(response.json.code, 'TL01-1105')
  t.match(response.json.message, /XML body/)
})

t.test('XML with __proto__ and constructor elements is a 400 and pollutes nothing', async (t) => {
  const response = await postXml('<project><__proto__><polluted>true</polluted></__proto__><name>x</name></project>')
  t.equal(response.status, 400)
  t.equal(response.json.code, 'TL01-1105')
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.equal((await a.get('time/projects/$count')).text, '0', 'nothing was created')
})

t.test('a HEAD answer has no body and the connection serves the next request', async (t) => {
  const exchange = await new Promise<string>((resolve) => {
    const socket = net.connect(server.client.port, '127.0.0.1')
    let received = ''
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
    socket.write(`HEAD /v1/time/projects?token=${owner.token} HTTP/1.1\r\nHost: hostile.localhost\r\n\r\n`)
    setTimeout(() => socket.write(`GET /v1/time/projects/$count?token=${owner.token} HTTP/1.1\r\nHost: hostile.localhost\r\n\r\n`), 150)
    setTimeout(() => {
      socket.destroy()
      resolve(received)
    }, 400)
  })
  const answers = exchange.split(/(?=HTTP\/1\.1 )/)
  t.equal(answers.length, 2, 'two answers on one connection')
  t.match(answers[0], /Content-Length: 0\r\n\r\n$/, 'the HEAD answer ends after its headers')
  t.match(answers[1], /^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\n0$/, 'the next request is answered whole')
})

t.test('a date past the range of a JavaScript Date is refused, so XML answers keep working', async (t) => {
  for (const begins of ['/Date(99999999999999999)/', '/Date(-8640000000000001)/', 1e17]) {
    const response = await a.post('time/projects', { name: 'far future', begins })
    t.equal(response.status, 400, `begins ${String(begins)}`)
    t.equal(response.json.code, 'TL01-1105')
  }
  t.equal((await a.post('time/projects', { name: 'edge', begins: '/Date(8640000000000000)/' })).status, 201, 'the last instant a Date holds is fine')
  const xml = await a.get('time/projects', { format: 'xml' })
  t.equal(xml.status, 200)
  t.match(xml.text, /<begins>\+275760-09-13T00:00:00\.000Z<\/begins>/)
})
