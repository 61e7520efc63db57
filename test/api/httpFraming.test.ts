/*
 * A request body framed two ways is refused (RFC 9112 §6.3), over raw
 * sockets against the public listener: a Content-Length sent twice (the
 * same or different values, `0` first with a request behind it), one that
 * is not digits, a Transfer-Encoding sent twice or other than exactly
 * `chunked`, and both headers at once. Each is answered 400 TL01-1105 and
 * its connection closed; when the rest arrives in the same read the
 * connection is closed with no answer at all. Nothing of any of them is
 * applied: the projects they would make are counted after. Bodies framed
 * one way (one Content-Length, `chunked`) still work. The admin listener
 * (Node's parser, messageRules.ts) refuses the same heads.
 */
import net from 'node:net'
import t, { type Test } from 'tap'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const port = client.port
const tenant = 'frame'
const { token } = await client.createTenant(tenant)
const HOST = `${tenant}.localhost`

interface Exchange {
  /** Everything the server sent. */
  received: string
  /** The server closed the connection (rather than the test giving up waiting). */
  closedByServer: boolean
}

/**
 * Sends `first`; once the server answered or closed (or `waitMs` passed), sends `rest` when given (a write to a closed
 * connection is ignored), and collects what comes back until the server closes or `waitMs` passes again.
 */
function exchange(target: number, first: string, rest?: string, waitMs = 1500): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(target, '127.0.0.1')
    let received = ''
    let closedByServer = false
    let restSent = rest === undefined
    let timer: NodeJS.Timeout
    const finish = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ received, closedByServer })
    }
    const sendRest = () => {
      restSent = true
      if (!closedByServer) socket.write(rest as string, () => undefined)
      timer = setTimeout(finish, waitMs)
    }
    timer = setTimeout(() => (restSent ? finish() : sendRest()), waitMs)
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
      if (!restSent && received.includes('\r\n\r\n')) {
        clearTimeout(timer)
        setTimeout(sendRest, 50)
      }
    })
    socket.on('end', () => {
      closedByServer = true
      if (restSent) finish()
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') {
        closedByServer = true
        if (restSent) finish()
      } else reject(error)
    })
    socket.write(first)
  })
}

function bodyOf(received: string): string {
  return received.slice(received.indexOf('\r\n\r\n') + 4)
}

const projectCount = async (): Promise<number> => {
  const list = await client.request('GET', '/v1/time/projects', { tenant, query: { token } })
  if (list.status !== 200) throw new Error(`the project list failed: ${list.status} ${list.text}`)
  return (list.json as unknown[]).length
}

/** A whole request that makes a project named `name` (what a smuggled request would do). */
function makeProject(name: string): string {
  const body = JSON.stringify({ name })
  return `POST /v1/time/projects?token=${token} HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
}

/** A request line and headers of a project creation, ending the head. */
function head(...fields: string[]): string {
  return `POST /v1/time/projects?token=${token} HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\n${fields.map((field) => `${field}\r\n`).join('')}\r\n`
}

function chunked(body: string): string {
  return `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`
}

const refusedWith400 = (t: Test, answer: Exchange, label: string, message: RegExp) => {
  t.match(answer.received, /^HTTP\/1\.1 400 Bad Request\r\n/, `${label}: 400`)
  t.match(JSON.parse(bodyOf(answer.received)), { status: 400, code: 'TL01-1105', message }, `${label}: the error body says why`)
  t.equal(answer.received.match(/HTTP\/1\.1 /g)?.length, 1, `${label}: one answer only`)
  t.ok(answer.closedByServer, `${label}: the connection is closed`)
}

t.test('Content-Length: 0 and a second Content-Length with a request in the body: nothing of it is served', async (t) => {
  const before = await projectCount()
  const smuggled = makeProject('smuggled')
  const shape = head('Content-Length: 0', `Content-Length: ${smuggled.length}`)
  refusedWith400(t, await exchange(port, shape, smuggled), 'the head alone first', /Content-Length is sent 2 times/)
  const together = await exchange(port, shape + smuggled)
  t.notMatch(together.received, /HTTP\/1\.1 [23]\d\d /, 'in one write: no request of it is answered as served')
  t.ok(together.closedByServer, 'in one write: the connection is closed')
  const reversed = await exchange(port, head(`Content-Length: ${smuggled.length}`, 'Content-Length: 0') + smuggled)
  t.notMatch(reversed.received, /HTTP\/1\.1 [23]\d\d /, 'the long length first: not served either')
  t.ok(reversed.closedByServer)
  t.equal(await projectCount(), before, 'no project was made')
})

t.test('two Content-Length values, different or the same: 400, nothing applied', async (t) => {
  const before = await projectCount()
  const body = JSON.stringify({ name: 'first length' })
  refusedWith400(t, await exchange(port, head(`Content-Length: ${body.length}`, `Content-Length: ${body.length + 30}`) + body), 'different', /Content-Length is sent 2 times/)
  refusedWith400(t, await exchange(port, head(`Content-Length: ${body.length}`, `Content-Length: ${body.length}`) + body), 'the same', /Content-Length is sent 2 times/)
  refusedWith400(t, await exchange(port, head('Content-Length: ') + body), 'an empty Content-Length', /not a number of bytes/)
  t.equal(await projectCount(), before, 'no project was made')
})

t.test('Transfer-Encoding other than exactly chunked, or sent twice: 400, nothing applied', async (t) => {
  const before = await projectCount()
  const body = chunked(JSON.stringify({ name: 'coded' }))
  for (const coding of ['chunked, identity', 'identity', 'gzip, chunked', 'chunked;q=1', '']) {
    refusedWith400(t, await exchange(port, head(`Transfer-Encoding: ${coding}`) + body), `Transfer-Encoding '${coding}'`, /not exactly 'chunked'/)
  }
  refusedWith400(t, await exchange(port, head('Transfer-Encoding: chunked', 'Transfer-Encoding: chunked') + body), 'twice', /Transfer-Encoding is sent 2 times/)
  t.equal(await projectCount(), before, 'no project was made')
})

t.test('Transfer-Encoding with Content-Length: closed unanswered by the parser, nothing applied', async (t) => {
  const before = await projectCount()
  const body = chunked(JSON.stringify({ name: 'both' }))
  for (const fields of [
    ['Transfer-Encoding: chunked', `Content-Length: ${body.length}`],
    [`Content-Length: ${body.length}`, 'Transfer-Encoding: chunked'],
  ]) {
    const answer = await exchange(port, head(...fields) + body)
    t.notMatch(answer.received, /HTTP\/1\.1 [23]\d\d /, `${fields.join(' + ')}: not served`)
    t.ok(answer.closedByServer, `${fields.join(' + ')}: closed`)
  }
  t.equal(await projectCount(), before, 'no project was made')
})

t.test('a body framed one way is served as before', async (t) => {
  const before = await projectCount()
  const length = await exchange(port, makeProject('by length'), undefined, 800)
  t.match(length.received, /^HTTP\/1\.1 201 Created\r\n/, 'one Content-Length')
  const coded = await exchange(port, head('Transfer-Encoding: Chunked') + chunked(JSON.stringify({ name: 'by chunks' })), undefined, 800)
  t.match(coded.received, /^HTTP\/1\.1 201 Created\r\n/, 'Transfer-Encoding: chunked (any letter case)')
  t.equal(await projectCount(), before + 2)
})

t.test('the admin listener refuses the same heads', async (t) => {
  const adminPort = server.service.adminPort
  for (const [label, fields] of [
    ['Content-Length twice', ['Content-Length: 2', 'Content-Length: 2']],
    ['Transfer-Encoding: identity', ['Transfer-Encoding: identity']],
  ] as const) {
    const answer = await exchange(adminPort, `POST /tenants/${tenant}/restore HTTP/1.1\r\nHost: 127.0.0.1\r\n${fields.map((field) => `${field}\r\n`).join('')}\r\n{}`)
    t.match(answer.received, /^HTTP\/1\.1 400 /, `${label}: 400`)
    t.ok(answer.closedByServer, `${label}: closed`)
  }
})
