/*
 * HAProxy, with the configuration `timeledger haproxy-config` prints, never
 * sends a request to a second node once a first one may have received it.
 * Found by the fault test (test/cluster/nemesis.test.ts): with `retry-on
 * empty-response`, a PUT whose node was killed (or paused, then marked down)
 * after it applied the write and before it answered was sent again to
 * another node, which answered 409 (the version had moved, by the write
 * itself): the client was told its write was refused, and the write was in
 * the log. Only a connection that failed (nothing sent) may be retried.
 *
 * Two stand-in nodes behind HAProxy answer its health checks and close the
 * connection of every other request without an answer, as a node killed
 * while processing it does; each counts what it received.
 */
import net from 'node:net'
import t from 'tap'
import { startHaproxy } from '../helpers/cluster.js'
import { TestClient } from '../helpers/http.js'
import { TEST_API_KEY } from '../helpers/server.js'
import { installed } from '../helpers/systemPrograms.js'

/** A PROXY protocol v2 header: this signature, then version, command, family, and the length of the rest (2 bytes). */
const PROXY_V2_SIGNATURE = '\r\n\r\n\0\r\nQUIT\n'
const PROXY_V2_FIXED_BYTES = 16

interface StandIn {
  readonly port: number
  /** The requests other than health checks it received ("PUT /v1/…"). */
  readonly received: string[]
  /** Health checks answered. */
  readonly checks: () => number
  close(): Promise<void>
}

/** A stand-in node: after the PROXY header, GET /readyz answers 200; any other request's connection is closed once it arrived. */
async function startStandIn(): Promise<StandIn> {
  const received: string[] = []
  let checks = 0
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
    let head = ''
    let proxyHeaderRead = false
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1')
      // HAProxy opens every connection, its health checks' too, with a PROXY protocol v2 header (send-proxy-v2).
      if (!proxyHeaderRead) {
        if (head.length < PROXY_V2_FIXED_BYTES) return
        if (!head.startsWith(PROXY_V2_SIGNATURE)) throw new Error('the connection does not start with a PROXY v2 header')
        const headerBytes = PROXY_V2_FIXED_BYTES + head.charCodeAt(14) * 256 + head.charCodeAt(15)
        if (head.length < headerBytes) return
        head = head.slice(headerBytes)
        proxyHeaderRead = true
      }
      for (let end = head.indexOf('\r\n\r\n'); end >= 0; end = head.indexOf('\r\n\r\n')) {
        const requestLine = head.slice(0, head.indexOf('\r\n'))
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head.slice(0, end))?.[1] ?? 0)
        if (head.length < end + 4 + length) return
        head = head.slice(end + 4 + length)
        const [method, path] = requestLine.split(' ')
        if (method === 'GET' && path === '/readyz') {
          checks += 1
          socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok')
          continue
        }
        received.push(`${method} ${path}`)
        // Killed while processing it: no answer, the connection gone.
        socket.destroy()
        return
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const address = server.address()
  if (address === null || typeof address !== 'object') throw new Error('the stand-in has no port')
  return {
    port: address.port,
    received,
    checks: () => checks,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

if (installed(t, ['haproxy'])) {
  t.test('a request whose node closed the connection without answering is not sent to another node', async (t) => {
    const standIns = [await startStandIn(), await startStandIn()]
    t.teardown(async () => {
      for (const standIn of standIns) await standIn.close()
    })
    const haproxy = await startHaproxy(standIns.map((standIn) => standIn.port))
    t.teardown(() => haproxy.stop())
    // Both up (two checks passed each: `rise 2`) before anything is sent.
    const deadline = Date.now() + 15_000
    while (standIns.some((standIn) => standIn.checks() < 3) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    const client = new TestClient(haproxy.port, TEST_API_KEY)

    for (const [method, body] of [
      ['PUT', { name: 'renamed', version: 3 }],
      ['POST', { name: 'created' }],
    ] as const) {
      const path = `/v1/time/projects/${method === 'PUT' ? 'p1' : ''}`.replace(/\/$/, '')
      const before = standIns.flatMap((standIn) => standIn.received).length
      const answer = await client.request(method, path, { tenant: 'replay', body, timeoutMs: 20_000 }).catch((error: Error) => error)
      const deliveries = standIns.flatMap((standIn) => standIn.received).length - before
      t.equal(deliveries, 1, `the ${method} reached one node only (${deliveries} deliveries; answer ${answer instanceof Error ? answer.message : answer.status})`)
      t.ok(answer instanceof Error || answer.status >= 500, `its client hears of no success (${answer instanceof Error ? answer.message : answer.status}): indeterminate, as it is`)
    }
  })
}
