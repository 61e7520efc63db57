/*
 * The writers of the change-feed benchmark (changes.ts), in a process of
 * their own (forked with `serialization: 'advanced'`): a fixed number of
 * keep-alive connections, each sending `POST /v1/time/projects` one after
 * the other (never pipelined) for a given time — as fast as the answers
 * come, or paced to a total rate — request k of connection c
 * going to tenant (c + k·connections) mod tenants, so every tenant is
 * written to. HTTP/1.1 is spoken on a bare socket — the request is one
 * prepared string, the answer is read up to its Content-Length — because
 * Node's http client costs about three times the CPU per request on the
 * two cores the server and the subscribers share.
 *
 * The acknowledgement of a write is the moment its whole answer was read:
 * its time `performance.timeOrigin + performance.now()` (the clock the
 * subscriber processes stamp events with) is kept with the answer's `id`,
 * per tenant, and sent to the parent with the count of writes, the
 * request latencies and anything that went wrong (a status other than 201,
 * an answer without an id, a closed socket), and the time each write was
 * sent, for the send→event figure. Writes still in flight when
 * the time is up are waited for and counted.
 */
import net from 'node:net'
import { isMainModule, scriptArgs } from './cliOptions.js'

export interface WriterJob {
  kind: 'write'
  port: number
  tenants: readonly { tenant: string; token: string }[]
  connections: number
  durationMs: number
  /** Writes per second over all connections, each connection pacing its share; 0: as fast as the answers come. */
  rate: number
}

export interface TenantAcks {
  ids: string[]
  /** Acknowledgement times (performance.timeOrigin + performance.now()), in the order of `ids`. */
  times: Float64Array
  /** When each write's request was sent, in the same clock. */
  sentTimes: Float64Array
}

export interface WriterResult {
  kind: 'written'
  /** Per tenant (the job's order). */
  acks: TenantAcks[]
  writes: number
  /** From the first request sent to the last answer read. */
  elapsedMs: number
  /** Request → answer of every write, ms. */
  requestMs: Float64Array
  failures: number
  firstFailure: string | null
}

const HEAD_END = Buffer.from('\r\n\r\n')

export function wallNow(): number {
  return performance.timeOrigin + performance.now()
}

/** One connection writing until `endAt`; resolves when its last answer was read. */
function writeOn(job: WriterJob, connection: number, endAt: number, record: (tenant: number, status: number, body: string, sentAt: number, ackAt: number) => void): Promise<void> {
  const requests = job.tenants.map(({ tenant, token }, index) => {
    const body = JSON.stringify({ name: `feed bench ${tenant} c${connection}` })
    const head = `POST /v1/time/projects?token=${encodeURIComponent(token)} HTTP/1.1\r\nHost: ${tenant}.localhost:${job.port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
    return { index, bytes: Buffer.from(head + body) }
  })
  return new Promise((resolve, reject) => {
    const socket = net.connect(job.port, '127.0.0.1')
    socket.setNoDelay(true)
    let k = 0
    let tenant = 0
    let sentAt = 0
    let pending: Buffer = Buffer.alloc(0)
    let done = false
    // Paced: request k of connection c leaves no earlier than (k + c/connections)·interval after the start (later when
    // an answer is late), so the connections' requests interleave instead of leaving together.
    const intervalMs = job.rate > 0 ? (1000 * job.connections) / job.rate : 0
    const startedAt = performance.now()
    const next = () => {
      const due = startedAt + (k + connection / job.connections) * intervalMs - performance.now()
      if (due > 0) setTimeout(send, due)
      else send()
    }
    const send = () => {
      tenant = (connection + k * job.connections) % requests.length
      k += 1
      sentAt = wallNow()
      socket.write((requests[tenant] as { bytes: Buffer }).bytes)
    }
    socket.on('connect', send)
    socket.on('data', (chunk: Buffer) => {
      const ackAt = wallNow()
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      const headEnd = pending.indexOf(HEAD_END)
      if (headEnd < 0) return
      const head = pending.subarray(0, headEnd).toString('latin1')
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
      if (length === null) {
        socket.destroy()
        reject(new Error(`an answer without Content-Length (chunked answers are not read here): ${head.slice(0, 200)}`))
        return
      }
      const end = headEnd + 4 + Number(length[1])
      if (pending.length < end) return
      const status = Number(head.slice(9, 12))
      const body = pending.subarray(headEnd + 4, end).toString('utf8')
      if (pending.length > end) {
        socket.destroy()
        reject(new Error('bytes after an answer on a connection that sent one request'))
        return
      }
      pending = Buffer.alloc(0)
      record(tenant, status, body, sentAt, ackAt)
      if (performance.now() < endAt) next()
      else {
        done = true
        socket.end()
        resolve()
      }
    })
    socket.on('error', (error) => {
      if (!done) reject(error)
    })
    socket.on('close', () => {
      if (!done) reject(new Error(`connection ${connection} closed by the server after ${k} requests`))
    })
  })
}

export async function runWriters(job: WriterJob): Promise<WriterResult> {
  const ids = job.tenants.map(() => [] as string[])
  const times = job.tenants.map(() => [] as number[])
  const sentTimes = job.tenants.map(() => [] as number[])
  const requestMs: number[] = []
  let failures = 0
  let firstFailure: string | null = null
  const record = (tenant: number, status: number, body: string, sentAt: number, ackAt: number) => {
    requestMs.push(ackAt - sentAt)
    let id: unknown
    try {
      id = (JSON.parse(body) as { id?: unknown }).id
    } catch {
      id = undefined
    }
    if (status !== 201 || typeof id !== 'string') {
      failures += 1
      firstFailure ??= `${status} ${body.slice(0, 300)}`
      return
    }
    ;(ids[tenant] as string[]).push(id)
    ;(times[tenant] as number[]).push(ackAt)
    ;(sentTimes[tenant] as number[]).push(sentAt)
  }
  const started = performance.now()
  const endAt = started + job.durationMs
  await Promise.all(Array.from({ length: job.connections }, (_, connection) => writeOn(job, connection, endAt, record)))
  const elapsedMs = performance.now() - started
  return {
    kind: 'written',
    acks: ids.map((tenantIds, index) => ({ ids: tenantIds, times: Float64Array.from(times[index] as number[]), sentTimes: Float64Array.from(sentTimes[index] as number[]) })),
    writes: ids.reduce((sum, tenantIds) => sum + tenantIds.length, 0),
    elapsedMs,
    requestMs: Float64Array.from(requestMs),
    failures,
    firstFailure,
  }
}

// Run as the forked writer process: one job per message, the result sent back.
if (isMainModule(import.meta.url)) {
  scriptArgs({
    usage: 'node dist/bench/changeWriters.js writer-process',
    about: "The change feed benchmark's writers: keep-alive connections POSTing projects, each answer stamped (see changes.ts).",
    options: {},
    positionals: ['writer-process'],
    startedBy: 'changes.js, which forks it and talks to it over IPC',
  })
}
if (process.send !== undefined && process.argv[2] === 'writer-process') {
  process.on('message', (job: WriterJob) => {
    runWriters(job).then(
      (result) => process.send?.(result),
      (error: Error) => process.send?.({ kind: 'failed', message: error.stack ?? error.message }),
    )
  })
  process.on('disconnect', () => process.exit(0))
}
