/*
 * The change feed's memory under the attack of issue 37 (finding 3): 400
 * subscribers that never read (half WebSocket, half event stream; 20 users
 * of one tenant with 20 each, within the default limits) and 400 writes of
 * a project with a 15 kB note, against a server in a child process with
 * the default settings. Without a budget each paused stream kept up to
 * CHANGE_FEED_MAX_BUFFERED_BYTES (4 MiB) waiting for it: the server grew
 * from 93 MB to 1,192 MB. With the node's budget
 * (CHANGE_FEED_MAX_BUFFERED_BYTES_PER_NODE, 64 MiB), the streams holding
 * the most are cut (4409) once all together hold more, and what they held
 * goes with them.
 *
 * The bound: the server's peak resident memory (VmHWM) may exceed what it
 * had before the attack by at most the budget plus 96 MiB. The 96 MiB are
 * what the budget does not count: the uWS buffer of each socket (at most
 * 64 KiB, about 25 MiB for 400), the writes themselves and their log
 * group commits, the V8 heap's headroom between collections, and the cut
 * streams' sockets until they close. A subscriber that reads gets every
 * event meanwhile. The paused ones, once they read again, find their
 * stream ended with 4409, most of them by the budget; or their connection
 * closed without an end (uWS closes an event stream's answer that its
 * client took nothing of for 10 s, and a WebSocket whose client read
 * nothing for 16 s after it was ended); or, for the few the budget left
 * (together within it), every event.
 */
import fs from 'node:fs'
import http from 'node:http'
import t from 'tap'
import { adminKeyOf, adminRequest } from '../helpers/admin.js'
import { api, newUser } from '../helpers/api.js'
import WebSocket from 'ws'
import { openWebSocketFeed } from '../helpers/changeFeed.js'
import { parseMetrics, samplesOf } from '../helpers/prometheus.js'
import { killHard, spawnServer, tempDataDir } from '../helpers/server.js'

const MIB = 1024 * 1024
const BUDGET_BYTES = 64 * MIB
const SLACK_BYTES = 96 * MIB
const USERS = 20
const PER_USER = 20
const WRITES = 400
const NOTE = 'n'.repeat(15_000)
/** How long a paused stream that reads again may take to end or get every event (this process reads all 400). */
const READ_AGAIN_MS = 120_000

const dataDir = tempDataDir('feed-memory')
// The request rate limit is not what this test is about: the owner writes 400 times in a few seconds.
const server = await spawnServer(dataDir, { RATE_LIMIT_REQUESTS: '0' })
t.teardown(() => killHard(server))
const { port } = server
const tenant = 'flood'
const owner = await server.client.createTenant(tenant)
const o = api(server.client, tenant, owner.token)

function memoryOf(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024
  return { rss: kib('VmRSS'), peak: kib('VmHWM') }
}

/**
 * How a paused stream ended once it read again: its close code and reason; 'dropped' for an event stream whose
 * connection the server closed without an end event (uWS closes an answer its client took nothing of for 10 s);
 * null when it got `events` events.
 */
type Outcome = { code: number; reason: string } | 'dropped' | null

/**
 * A feed stream whose client reads nothing until `resume`, then reads (counting events, not parsing them) until
 * the stream ends or `events` came; rejects after READ_AGAIN_MS.
 */
interface PausedStream {
  resume(events: number): Promise<Outcome>
}

function pausedWebSocket(token: string): Promise<PausedStream> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/changes?token=${token}&resources=time/projects`, { headers: { host: `${tenant}.localhost` }, perMessageDeflate: false })
  let count = 0
  socket.on('message', () => (count += 1))
  const closed = new Promise<Outcome>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  return new Promise((resolve, reject) => {
    socket.once('error', reject)
    socket.once('open', () => {
      socket.pause()
      resolve({
        resume: (events) => {
          socket.resume()
          const caughtUp = new Promise<Outcome>((done, fail) => {
            const timer = setTimeout(() => fail(new Error(`a WebSocket got ${count} of ${events} events and did not end`)), READ_AGAIN_MS)
            const check = setInterval(() => {
              if (count < events) return
              clearInterval(check)
              clearTimeout(timer)
              socket.close()
              done(null)
            }, 50)
            void closed.then(() => {
              clearInterval(check)
              clearTimeout(timer)
            })
          })
          return Promise.race([closed, caughtUp])
        },
      })
    })
  })
}

function pausedEventStream(token: string): Promise<PausedStream> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port, path: `/v1/changes?token=${token}&resources=time/projects`, headers: { host: `${tenant}.localhost`, accept: 'text/event-stream' }, agent: false },
      (response) => {
        if (response.statusCode !== 200) reject(new Error(`event stream refused: ${response.statusCode}`))
        response.pause()
        resolve({
          resume: (events) =>
            new Promise((done, fail) => {
              let count = 0
              let partial = ''
              const timer = setTimeout(() => fail(new Error(`an event stream got ${count} of ${events} events and did not end`)), READ_AGAIN_MS)
              response.on('close', () => {
                clearTimeout(timer)
                done('dropped')
              })
              response.on('data', (chunk: Buffer) => {
                // Whole events end with a blank line: count those, keep the part of one that is still coming.
                const parts = (partial + chunk.toString()).split('\n\n')
                partial = parts.pop() ?? ''
                let end: Outcome | undefined
                for (const part of parts) {
                  if (part.startsWith('event: change\n') || part.includes('\nevent: change\n')) count += 1
                  const data = /^event: end\ndata: (.*)$/m.exec(part)?.[1]
                  if (data !== undefined) end = JSON.parse(data) as { code: number; reason: string }
                }
                if (end === undefined && count < events) return
                clearTimeout(timer)
                request.destroy()
                done(end ?? null)
              })
              response.resume()
            }),
        })
      },
    )
    request.on('error', reject)
  })
}

t.test('400 paused subscribers and 400 writes of 15 kB: memory stays within the budget and a bound', async (t) => {
  const paused: PausedStream[] = []
  for (let n = 0; n < USERS; n += 1) {
    const user = await newUser(server.client, tenant, o, `Flood${n}`)
    for (let k = 0; k < PER_USER / 2; k += 1) {
      paused.push(await pausedWebSocket(user.api.token), await pausedEventStream(user.api.token))
    }
  }
  const reader = await openWebSocketFeed(port, tenant, owner.token, { resources: 'time/projects' })
  const before = memoryOf(server.child.pid as number)

  let next = 0
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < WRITES) {
        next += 1
        await o.create('time/projects', { name: `flood ${next}`, note: NOTE })
      }
    }),
  )
  await reader.waitFor(WRITES, 60_000)
  t.equal(reader.events.length, WRITES, 'the subscriber that reads got every event')
  const after = memoryOf(server.child.pid as number)
  const bound = before.rss + BUDGET_BYTES + SLACK_BYTES
  t.ok(after.peak <= bound, `peak RSS ${(after.peak / MIB).toFixed(0)} MiB (before the attack ${(before.rss / MIB).toFixed(0)} MiB) within ${(bound / MIB).toFixed(0)} MiB`)

  const metrics = parseMetrics((await adminRequest(server.adminPort, 'GET', '/metrics', adminKeyOf(dataDir))).text)
  const value = (name: string) => samplesOf(metrics, name)[0]?.value ?? NaN
  t.ok(value('timeledger_change_feed_budget_cuts_total') >= paused.length / 2, `the budget cut ${value('timeledger_change_feed_budget_cuts_total')} of the ${paused.length} paused streams`)
  t.ok(value('timeledger_change_feed_buffered_bytes') <= BUDGET_BYTES, `${value('timeledger_change_feed_buffered_bytes')} bytes wait now, within the budget`)

  // The paused ones read again: each either finds its stream ended as too slow (most by the budget), or was among the
  // few the budget left (together within it), which now get every event.
  const outcomes = await Promise.all(paused.map((stream) => stream.resume(WRITES)))
  const described = outcomes.map((end, index) => {
    const form = index % 2 === 0 ? 'WebSocket' : 'event stream'
    if (end === null) return `${form}: caught up`
    // 1006: no close frame came (uWS closes a socket whose client took nothing for 16 s after its end).
    if (end === 'dropped' || (end.code === 1006 && form === 'WebSocket')) return `${form}: dropped`
    return `${form}: ${end.code} ${end.code === 4409 ? (/room/.test(end.reason) ? 'budget' : 'own limit') : end.reason}`
  })
  const counts: Record<string, number> = {}
  for (const outcome of described) counts[outcome] = (counts[outcome] ?? 0) + 1
  t.comment(`the paused streams, once they read again: ${JSON.stringify(counts)}`)
  t.ok((counts['WebSocket: 4409 budget'] ?? 0) > 0 && (counts['event stream: 4409 budget'] ?? 0) > 0, "the budget's 4409 reaches clients of both forms")
  const allowed = [
    'WebSocket: 4409 budget',
    'WebSocket: 4409 own limit',
    'WebSocket: dropped',
    'WebSocket: caught up',
    'event stream: 4409 budget',
    'event stream: 4409 own limit',
    'event stream: dropped',
    'event stream: caught up',
  ]
  t.same(
    Object.keys(counts).filter((outcome) => !allowed.includes(outcome)),
    [],
    'each ended as too slow or got every event',
  )
  reader.close()
})
