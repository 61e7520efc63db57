/*
 * The subscribers of the change-feed benchmark (changes.ts), in a process
 * of their own (forked with `serialization: 'advanced'`; the parent spreads
 * the subscribers over several such processes, one alone cannot read
 * thousands of sockets fast enough). Each subscriber is a `ws` WebSocket on
 * `GET /v1/changes?token=…` of its tenant's host, without permessage-deflate
 * and without UTF-8 validation (cheaper: the process must keep up).
 *
 * For every event a subscriber gets, the process keeps the event's object
 * id (interned to a number) and the receive time `performance.timeOrigin +
 * performance.now()`, taken first thing in the message handler, and checks
 * that event ids (`seq`.`op`) increase on the connection. It answers the
 * parent's requests (each carries a `ticket`, echoed in the answer):
 *
 *   connect   open the given subscriptions, at most `concurrency` handshakes at a time
 *   status    open sockets, events since the last reset, subscribers with any, subscribers that
 *             got their tenant's `sentinels` event (readiness: events of a connection come in
 *             order, so one that got it got everything before it), close codes seen
 *   reset     forget the events received so far (the readiness writes before a measurement)
 *   collect   match the events against the writers' acknowledgements of each tenant:
 *             every ack→event latency (clamped at 0; negatives counted) and send→event time, and per subscriber
 *             the writes it never got, those it got twice, events of no measured write
 *   close     close every socket and wait for the closes
 */
import WebSocket from 'ws'
import type { TenantAcks } from './changeWriters.js'
import { isMainModule, scriptArgs } from './cliOptions.js'

export interface Subscription {
  tenantIndex: number
  tenant: string
  token: string
}

export type SubscriberRequest =
  | { ticket: number; kind: 'connect'; port: number; subscriptions: Subscription[]; concurrency: number }
  | { ticket: number; kind: 'status'; sentinels?: (string | null)[] }
  | { ticket: number; kind: 'reset' }
  | { ticket: number; kind: 'collect'; acks: TenantAcks[] }
  | { ticket: number; kind: 'close' }

export interface SubscriberStatus {
  open: number
  /** Events received since the last reset, over all subscribers. */
  received: number
  /** Subscribers that received at least one event since the last reset. */
  withEvents: number
  /** Subscribers that got the event of their tenant's sentinel (the request's `sentinels`, by tenant index). */
  sawSentinel: number
  /** Close codes the server sent (or 1006 for a connection that dropped), with how many. */
  closes: Record<string, number>
}

export interface Collected {
  subscribers: number
  received: number
  /** Ack→event latency of every (subscriber, write) pair received, ms, negatives clamped to 0. */
  latencies: Float64Array
  /** Request sent → event of the same pairs, ms (never negative in one clock: the event comes after the write was sent). */
  fromSend: Float64Array
  negative: number
  /** The most negative latency seen (ms), 0 when none. */
  mostNegativeMs: number
  /** Measured writes of its tenant a subscriber never got, summed; and the subscribers missing any. */
  missing: number
  subscribersMissing: number
  duplicates: number
  /** Events whose id is no write the writers acknowledged in this measurement. */
  unexpected: number
  /** Events whose id `seq`.`op` did not increase on its connection. */
  outOfOrder: number
}

export type SubscriberAnswer =
  | ({ ticket: number; kind: 'connected' } & { opened: number; failed: number; firstFailure: string | null; ms: number })
  | ({ ticket: number; kind: 'status' } & SubscriberStatus)
  | { ticket: number; kind: 'reset' }
  | ({ ticket: number; kind: 'collected' } & Collected)
  | ({ ticket: number; kind: 'closed' } & SubscriberStatus)
  | { ticket: number; kind: 'failed'; message: string }

interface Subscriber {
  readonly tenantIndex: number
  readonly socket: WebSocket
  /** Interned object ids and receive times of the events since the last reset. */
  ids: number[]
  times: number[]
  lastSeq: number
  lastOp: number
  outOfOrder: number
}

const subscribers: Subscriber[] = []
const internedIds = new Map<string, number>()
const closes: Record<string, number> = {}

function intern(id: string): number {
  let number = internedIds.get(id)
  if (number === undefined) {
    number = internedIds.size
    internedIds.set(id, number)
  }
  return number
}

interface EventKey {
  seq: number
  op: number
  id: string
}

const SEQ_KEY = Buffer.from('"seq":')
const OP_KEY = Buffer.from('"op":')
const ID_KEY = Buffer.from('"id":"')
const OBJECT_KEY = Buffer.from('"object":')

/** The integer written at `from` (digits only), or NaN. */
function integerAt(data: Buffer, from: number): number {
  let value = 0
  let at = from
  for (; at < data.length; at += 1) {
    const byte = data[at] as number
    if (byte < 0x30 || byte > 0x39) break
    value = value * 10 + byte - 0x30
  }
  return at === from ? Number.NaN : value
}

/**
 * The event's `seq`, `op` and top-level `id`, read off the bytes: the subscriber processes must not be what limits
 * the run, and JSON.parse of every event costs them a third more CPU. The keys are those of the protocol's event;
 * the top-level `id` is the first `"id":"` before `"object":`. Anything else falls back to JSON.parse; a message
 * that is no event gives seq/op NaN and an id no write has (counted as unexpected and out of order).
 */
function readEvent(data: Buffer): EventKey {
  const seqAt = data.indexOf(SEQ_KEY)
  const opAt = data.indexOf(OP_KEY)
  const idAt = data.indexOf(ID_KEY)
  const objectAt = data.indexOf(OBJECT_KEY)
  if (seqAt >= 0 && opAt >= 0 && idAt >= 0 && (objectAt < 0 || idAt < objectAt)) {
    const idStart = idAt + ID_KEY.length
    const idEnd = data.indexOf(0x22, idStart)
    const seq = integerAt(data, seqAt + SEQ_KEY.length)
    const op = integerAt(data, opAt + OP_KEY.length)
    if (idEnd > idStart && Number.isFinite(seq) && Number.isFinite(op) && (objectAt < 0 || (seqAt < objectAt && opAt < objectAt))) return { seq, op, id: data.toString('latin1', idStart, idEnd) }
  }
  try {
    const event = JSON.parse(data.toString('utf8')) as Partial<EventKey>
    return { seq: Number(event.seq), op: Number(event.op), id: String(event.id) }
  } catch {
    return { seq: Number.NaN, op: Number.NaN, id: '(not JSON)' }
  }
}

function open(port: number, subscription: Subscription): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const url = `ws://127.0.0.1:${port}/v1/changes?token=${encodeURIComponent(subscription.token)}`
    const socket = new WebSocket(url, { headers: { host: `${subscription.tenant}.localhost:${port}` }, perMessageDeflate: false, skipUTF8Validation: true, handshakeTimeout: 60_000 })
    const subscriber: Subscriber = { tenantIndex: subscription.tenantIndex, socket, ids: [], times: [], lastSeq: -1, lastOp: -1, outOfOrder: 0 }
    socket.on('message', (data: Buffer) => {
      const at = performance.timeOrigin + performance.now()
      const event = readEvent(data)
      if (!(event.seq > subscriber.lastSeq || (event.seq === subscriber.lastSeq && event.op > subscriber.lastOp))) subscriber.outOfOrder += 1
      subscriber.lastSeq = event.seq
      subscriber.lastOp = event.op
      subscriber.ids.push(intern(event.id))
      subscriber.times.push(at)
    })
    socket.once('open', () => resolve(subscriber))
    socket.once('unexpected-response', (_request, response) => {
      let text = ''
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      response.on('end', () => reject(new Error(`${response.statusCode ?? '?'} ${text.slice(0, 300)}`)))
    })
    socket.on('error', (error) => reject(error))
    socket.on('close', (code) => {
      closes[code] = (closes[code] ?? 0) + 1
    })
  })
}

async function connect(port: number, subscriptions: Subscription[], concurrency: number) {
  const started = performance.now()
  let next = 0
  let failed = 0
  let firstFailure: string | null = null
  const worker = async () => {
    while (next < subscriptions.length) {
      const subscription = subscriptions[next] as Subscription
      next += 1
      try {
        subscribers.push(await open(port, subscription))
      } catch (error) {
        failed += 1
        firstFailure ??= `${subscription.tenant}: ${(error as Error).message}`
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, subscriptions.length) }, worker))
  return { opened: subscriptions.length - failed, failed, firstFailure, ms: performance.now() - started }
}

function status(sentinels: readonly (string | null)[] = []): SubscriberStatus {
  const sentinelIds = sentinels.map((id) => (id === null ? -1 : intern(id)))
  let sawSentinel = 0
  let received = 0
  let withEvents = 0
  let openSockets = 0
  for (const subscriber of subscribers) {
    received += subscriber.ids.length
    if (subscriber.ids.length > 0) withEvents += 1
    if (subscriber.socket.readyState === WebSocket.OPEN) openSockets += 1
    const sentinel = sentinelIds[subscriber.tenantIndex]
    if (sentinel !== undefined && subscriber.ids.includes(sentinel)) sawSentinel += 1
  }
  return { open: openSockets, received, withEvents, sawSentinel, closes: { ...closes } }
}

function reset(): void {
  for (const subscriber of subscribers) {
    subscriber.ids = []
    subscriber.times = []
    subscriber.outOfOrder = 0
  }
}

function collect(acks: TenantAcks[]): Collected {
  // Per tenant: interned id → its place among the tenant's acknowledged writes.
  const placeOf = acks.map((tenant) => {
    const places = new Map<number, number>()
    tenant.ids.forEach((id, place) => {
      places.set(intern(id), place)
    })
    return places
  })
  let total = 0
  for (const subscriber of subscribers) total += subscriber.ids.length
  const latencies = new Float64Array(total)
  const fromSend = new Float64Array(total)
  const result: Collected = {
    subscribers: subscribers.length,
    received: total,
    latencies,
    fromSend,
    negative: 0,
    mostNegativeMs: 0,
    missing: 0,
    subscribersMissing: 0,
    duplicates: 0,
    unexpected: 0,
    outOfOrder: 0,
  }
  let filled = 0
  for (const subscriber of subscribers) {
    const tenant = acks[subscriber.tenantIndex] as TenantAcks
    const places = placeOf[subscriber.tenantIndex] as Map<number, number>
    const seen = new Uint8Array(tenant.ids.length)
    result.outOfOrder += subscriber.outOfOrder
    subscriber.ids.forEach((id, index) => {
      const place = places.get(id)
      if (place === undefined) {
        result.unexpected += 1
        return
      }
      if (seen[place] === 1) {
        result.duplicates += 1
        return
      }
      seen[place] = 1
      const latency = (subscriber.times[index] as number) - (tenant.times[place] as number)
      if (latency < 0) {
        result.negative += 1
        result.mostNegativeMs = Math.min(result.mostNegativeMs, latency)
      }
      latencies[filled] = Math.max(0, latency)
      fromSend[filled] = (subscriber.times[index] as number) - (tenant.sentTimes[place] as number)
      filled += 1
    })
    const missing = seen.length - seen.reduce((sum, bit) => sum + bit, 0)
    result.missing += missing
    if (missing > 0) result.subscribersMissing += 1
  }
  result.latencies = latencies.subarray(0, filled).slice()
  result.fromSend = fromSend.subarray(0, filled).slice()
  return result
}

async function close(): Promise<SubscriberStatus> {
  await Promise.all(
    subscribers.map(
      (subscriber) =>
        new Promise<void>((resolve) => {
          if (subscriber.socket.readyState === WebSocket.CLOSED) return resolve()
          const timer = setTimeout(() => {
            subscriber.socket.terminate()
            resolve()
          }, 10_000)
          subscriber.socket.once('close', () => {
            clearTimeout(timer)
            resolve()
          })
          subscriber.socket.close(1000, 'done')
        }),
    ),
  )
  const final = status()
  subscribers.length = 0
  internedIds.clear()
  for (const code of Object.keys(closes)) delete closes[code]
  return final
}

async function answer(request: SubscriberRequest): Promise<SubscriberAnswer> {
  switch (request.kind) {
    case 'connect':
      return { ticket: request.ticket, kind: 'connected', ...(await connect(request.port, request.subscriptions, request.concurrency)) }
    case 'status':
      return { ticket: request.ticket, kind: 'status', ...status(request.sentinels) }
    case 'reset':
      reset()
      return { ticket: request.ticket, kind: 'reset' }
    case 'collect':
      return { ticket: request.ticket, kind: 'collected', ...collect(request.acks) }
    case 'close':
      return { ticket: request.ticket, kind: 'closed', ...(await close()) }
  }
}

if (isMainModule(import.meta.url)) {
  scriptArgs({
    usage: 'node dist/bench/changeSubscribers.js subscriber-process',
    about: "The change feed benchmark's subscribers: WebSocket clients that stamp every event they receive (see changes.ts).",
    options: {},
    positionals: ['subscriber-process'],
    startedBy: 'changes.js, which forks it and talks to it over IPC',
  })
}
if (process.send !== undefined && process.argv[2] === 'subscriber-process') {
  process.on('message', (request: SubscriberRequest) => {
    answer(request).then(
      (reply) => process.send?.(reply),
      (error: Error) => process.send?.({ ticket: request.ticket, kind: 'failed', message: error.stack ?? error.message }),
    )
  })
  process.on('disconnect', () => process.exit(0))
}
