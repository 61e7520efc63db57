/*
 * One POST of one event to a webhook's URL: the event's JSON as the body,
 * the headers receivers de-duplicate (X-TimeLedger-Event), route
 * (X-TimeLedger-Webhook) and verify (X-TimeLedger-Signature, signature.ts)
 * by, a time limit on the whole exchange (WEBHOOK_TIMEOUT_MS). A 2xx is
 * delivered; any other status, a network error or the time limit is a
 * failed attempt, told with a short reason.
 *
 * Node's http/https request rather than fetch: its `lookup` hook is where
 * the address guard (domain/webhookAddress.ts) sees every address the name
 * resolves to for this very connection, so a name resolved to a public
 * address at the check and to a private one at the connection (DNS
 * rebinding) is refused. A literal address never goes through lookup: it is
 * checked before.
 */
import dns from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { hostOf, isForbiddenAddress } from '../domain/webhookAddress.js'
import { SIGNATURE_HEADER, signatureHeader } from './signature.js'

export interface PostResult {
  readonly ok: boolean
  /** The receiver's status; null when none answered. */
  readonly status: number | null
  /** Why it failed; null when ok. */
  readonly error: string | null
}

export interface EventPost {
  readonly url: URL
  readonly webhookId: string
  readonly secret: string
  readonly eventId: string
  readonly body: string
  readonly timeoutMs: number
  readonly allowPrivate: boolean
}

/** The most of a receiver's answer read (then the connection is dropped): only the status matters. */
const MAX_ANSWER_BYTES = 64 * 1024

class ForbiddenAddress extends Error {
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, a private, loopback or otherwise internal address (WEBHOOK_ALLOW_PRIVATE=1 allows it)`)
  }
}

/** dns.lookup, refusing a name any of whose addresses is forbidden. */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error !== null) {
      callback(error, '', 4)
      return
    }
    const forbidden = addresses.find((entry) => isForbiddenAddress(entry.address))
    if (forbidden !== undefined) {
      callback(new ForbiddenAddress(hostname, forbidden.address) as NodeJS.ErrnoException, '', 4)
      return
    }
    if (options.all === true) (callback as unknown as (error: null, addresses: dns.LookupAddress[]) => void)(null, addresses)
    else callback(null, addresses[0]?.address ?? '', addresses[0]?.family ?? 4)
  })
}

function reasonOf(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `no answer within ${timeoutMs} ms`
  if (error instanceof ForbiddenAddress) return `refused: ${error.message}`
  const code = (error as NodeJS.ErrnoException | null)?.code
  const message = error instanceof Error ? error.message : String(error)
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message
}

export function postEvent(post: EventPost): Promise<PostResult> {
  const { url, timeoutMs } = post
  const host = hostOf(url)
  if (!post.allowPrivate && isForbiddenAddress(host)) {
    return Promise.resolve({ ok: false, status: null, error: `refused: ${host} is a private, loopback or otherwise internal address (WEBHOOK_ALLOW_PRIVATE=1 allows it)` })
  }
  const body = Buffer.from(post.body)
  const headers = {
    'Content-Type': 'application/json',
    'Content-Length': String(body.length),
    'User-Agent': 'TimeLedger-Webhooks/1',
    'X-TimeLedger-Event': post.eventId,
    'X-TimeLedger-Webhook': post.webhookId,
    [SIGNATURE_HEADER]: signatureHeader(post.secret, body, Math.floor(Date.now() / 1000)),
  }
  return new Promise((resolve) => {
    let settled = false
    const settle = (result: PostResult) => {
      if (settled) return
      settled = true
      resolve(result)
    }
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers,
      agent: false,
      signal: AbortSignal.timeout(timeoutMs),
      ...(post.allowPrivate ? {} : { lookup: guardedLookup }),
    })
    request.on('response', (response) => {
      const status = response.statusCode ?? 0
      let read = 0
      response.on('data', (chunk: Buffer) => {
        read += chunk.length
        if (read > MAX_ANSWER_BYTES) response.destroy()
      })
      const done = () => settle(status >= 200 && status < 300 ? { ok: true, status, error: null } : { ok: false, status, error: `the receiver answered ${status}` })
      response.on('end', done)
      response.on('close', done)
      response.on('error', done)
    })
    request.on('error', (error) => settle({ ok: false, status: null, error: reasonOf(error, timeoutMs) }))
    request.end(body)
  })
}
