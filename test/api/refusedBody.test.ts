/*
 * A body over its limit is answered 413, and the answer reaches the client
 * even behind a proxy: a body of a declared length is read to its end and
 * thrown away, so the connection is not reset under a client still sending
 * (HAProxy dropped the 413 it had not yet passed on) and goes on with the
 * next request. A body declared longer than REFUSED_BODY_DRAIN_MAX_BYTES
 * past the limit, or one without a length, is answered too (its connection
 * is asked to close; whether uWS closes it at once depends on where the
 * body stands). Nothing of a refused body is stored. In the cluster parity
 * suite this runs through HAProxy.
 */
import net from 'node:net'
import t from 'tap'
import { REFUSED_BODY_DRAIN_MAX_BYTES } from '../../src/http/limitedBody.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'
import { startInProcess } from '../helpers/server.js'

inClusterParitySuite()

const MAX_BODY_BYTES = 4096
const server = await startInProcess(undefined, { MAX_BODY_BYTES: String(MAX_BODY_BYTES) })
t.teardown(() => server.stop())
const { client } = server
const tenant = 'refused'
const { token } = await client.createTenant(tenant)
const HOST = `${tenant}.localhost`

interface Conversation {
  /** The statuses of the answers, in order. */
  statuses: number[]
  /** The whole text the server sent. */
  received: string
  /** The server closed the connection before the test did. */
  closedByServer: boolean
}

/** Writes `chunks` on one connection, each once the socket drained; collects answers until `answers` came, the server closed, or `waitMs` passed. */
function converse(chunks: readonly (string | Buffer)[], answers: number, waitMs = 10_000): Promise<Conversation> {
  return new Promise((resolve) => {
    const socket = net.connect(client.port, '127.0.0.1')
    let received = ''
    let closedByServer = false
    let finished = false
    const statuses = () => [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => Number(match[1]))
    const finish = () => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ statuses: statuses(), received, closedByServer })
    }
    const timer = setTimeout(finish, waitMs)
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1')
      if (statuses().length >= answers && /[}\]]$/.test(received.trimEnd())) finish()
    })
    socket.on('end', () => {
      closedByServer = true
      finish()
    })
    socket.on('error', () => {
      closedByServer = true
      finish()
    })
    socket.on('connect', async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return
        if (!socket.write(chunk)) await new Promise((resolve) => socket.once('drain', resolve))
      }
    })
  })
}

function head(method: string, target: string, headers: Record<string, string | number>): string {
  return `${method} ${target} HTTP/1.1\r\nHost: ${HOST}\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`
}

const projectsPath = `/v1/time/projects?token=${token}`
const listing = head('GET', `/v1/time/projects?token=${token}&$select=name`, {})

async function projectNames(): Promise<string[]> {
  const answer = await client.request('GET', '/v1/time/projects', { tenant, query: { token } })
  return (answer.json as { name: string }[]).map((project) => project.name)
}

t.test('a body over the limit with its length declared: 413, the rest read and thrown away, the connection goes on', async (t) => {
  const body = JSON.stringify({ name: 'too long', description: 'x'.repeat(MAX_BODY_BYTES * 4) })
  const conversation = await converse([head('POST', projectsPath, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }), body, listing], 2)
  t.same(conversation.statuses, [413, 200], 'the refusal, then the next request on the same connection')
  t.match(conversation.received, /"code":"TL01-9006"/)
  t.match(conversation.received, /MAX_BODY_BYTES/)
  t.notOk(conversation.closedByServer, 'the connection stays open')
  t.same(await projectNames(), [], 'nothing of it is stored')
})

t.test('a big body over the limit, sent in many writes, still gets its 413', async (t) => {
  const body = Buffer.alloc(MAX_BODY_BYTES * 256, 'y')
  const pieces = Array.from({ length: 64 }, (_, index) => body.subarray((index * body.length) / 64, ((index + 1) * body.length) / 64))
  const conversation = await converse([head('POST', projectsPath, { 'Content-Type': 'application/json', 'Content-Length': body.length }), ...pieces, listing], 2)
  t.same(conversation.statuses, [413, 200])
  t.same(await projectNames(), [])
})

t.test('a body declared longer than the limit and the drain allowance: 413 before the body', async (t) => {
  const declared = MAX_BODY_BYTES + REFUSED_BODY_DRAIN_MAX_BYTES + 1
  const conversation = await converse([head('POST', projectsPath, { 'Content-Type': 'application/json', 'Content-Length': declared }), 'x'.repeat(1000)], 1)
  t.same(conversation.statuses, [413])
  t.match(conversation.received, /"code":"TL01-9006"/)
  t.same(await projectNames(), [])
})

t.test('a chunked body over the limit: 413', async (t) => {
  const chunk = 'z'.repeat(MAX_BODY_BYTES)
  const chunked = `${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(3)
  const conversation = await converse([head('POST', projectsPath, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }), chunked], 1, 5_000)
  t.same(conversation.statuses, [413])
  t.match(conversation.received, /"code":"TL01-9006"/)
  t.same(await projectNames(), [])
})

t.test('a body within the limit is still taken', async (t) => {
  const body = JSON.stringify({ name: 'fits' })
  const conversation = await converse([head('POST', projectsPath, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }), body], 1)
  t.same(conversation.statuses, [201])
  t.same(await projectNames(), ['fits'])
})
