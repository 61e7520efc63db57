/*
 * The change feed's WebSocket on a node that does not hold the tenant
 * (cluster mode, forwarding.ts): this node opens a WebSocket of its own (the
 * `ws` client) to the holding node's internal listener, carrying the
 * forwarding credential like any forwarded request, and only once that node took the
 * upgrade does it upgrade the client (an answer that refuses the upgrade —
 * a bad option, token or `since` — is given back as it came, an ordinary
 * error answer). Then it pipes: each message of the holding node goes to
 * the client as it is, the holding node's close code and reason end the
 * client's socket, and the client's close ends the upstream one with the
 * client's code (when it is one a client may send).
 *
 * Backpressure: past a quarter of CHANGE_FEED_MAX_BUFFERED_BYTES waiting
 * for the client, the upstream socket is paused until the client took it
 * (the holding node's own limit then applies, as TCP backs up); should the
 * client side still hold more than the limit, the client is closed with
 * 4409 (too slow: reconnect with since). An upstream connection that ends
 * without a close frame (the holding node died) ends the client's with
 * 4503: the tenant moves, the client reconnects with `since`.
 */
import WebSocket from 'ws'
import type { ApiResponse, WebSocketStart } from '../response.js'
import { FEED_CLOSE, type FeedClose, type FeedOutlet } from './feedOutlet.js'

/** Longest wait for the holding node to take the upgrade. */
const HANDSHAKE_TIMEOUT_MS = 10_000
/** An upstream socket the listener never attached to a client (the client left before its upgrade) is closed after this. */
const UNATTACHED_MS = 10_000

/** A close code `ws` lets a client send (RFC 6455 §7.4): 1000–1003, 1007–1014, 3000–4999. */
function sendableCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999)
}

/**
 * Opens the feed's WebSocket on the holding node at `url` (ws://…/v1/changes?…) with `headers`; resolves with the
 * upgrade start (status 101) once that node took it, or with that node's refusal; rejects when it cannot be reached.
 */
export function forwardWebSocket(url: string, headers: Record<string, string>, maxBufferedBytes: number): Promise<ApiResponse> {
  return new Promise<ApiResponse>((resolve, reject) => {
    const upstream = new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: HANDSHAKE_TIMEOUT_MS, maxPayload: 0 })
    let opened = false
    upstream.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () => {
        const answerHeaders: Record<string, string> = {}
        for (const name of ['content-type', 'retry-after', 'www-authenticate', 'vary']) {
          const value = response.headers[name]
          if (typeof value === 'string') answerHeaders[name] = value
        }
        resolve({ status: response.statusCode ?? 502, headers: answerHeaders, body: Buffer.concat(chunks) })
      })
    })
    upstream.on('error', (error) => {
      if (!opened) reject(error)
      // After the upgrade an error is followed by 'close', which ends the client's socket.
    })
    upstream.once('open', () => {
      opened = true
      resolve({ status: 101, headers: {}, body: '', webSocket: pipeTo(upstream, maxBufferedBytes) })
    })
  })
}

/** The start of the client's socket: messages that came before it are kept and sent first. */
function pipeTo(upstream: WebSocket, maxBufferedBytes: number): WebSocketStart {
  const early: string[] = []
  let upstreamEnd: FeedClose | null = null
  const onEarlyMessage = (data: WebSocket.RawData) => early.push(data.toString())
  const onEarlyClose = (code: number, reason: Buffer) => (upstreamEnd = endOf(code, reason))
  upstream.on('message', onEarlyMessage)
  upstream.once('close', onEarlyClose)
  const unattached = setTimeout(() => upstream.terminate(), UNATTACHED_MS)
  unattached.unref()
  return (outlet: FeedOutlet) => {
    clearTimeout(unattached)
    upstream.off('message', onEarlyMessage)
    upstream.off('close', onEarlyClose)
    let clientOpen = true
    const lowWaterBytes = Math.floor(maxBufferedBytes / 4)
    const forward = (text: string): void => {
      if (!clientOpen) return
      outlet.send('', text)
      const buffered = outlet.bufferedBytes()
      if (buffered > maxBufferedBytes) {
        endClient(FEED_CLOSE.tooSlow)
        upstream.close(1000)
      } else if (buffered > lowWaterBytes && !upstream.isPaused) {
        upstream.pause()
        void outlet.drained().then(() => upstream.resume())
      }
    }
    const endClient = (end: FeedClose): void => {
      if (!clientOpen) return
      clientOpen = false
      outlet.close(end)
    }
    for (const text of early.splice(0)) forward(text)
    if (upstreamEnd !== null) endClient(upstreamEnd)
    else {
      upstream.on('message', (data) => forward(data.toString()))
      upstream.once('close', (code, reason) => endClient(endOf(code, reason)))
    }
    return {
      gone(code?: number, reason?: string) {
        clientOpen = false
        if (upstream.readyState === WebSocket.CLOSED || upstream.readyState === WebSocket.CLOSING) return
        if (code !== undefined && sendableCode(code)) upstream.close(code, reason)
        else upstream.close(1000)
      },
    }
  }
}

/** The client's end for the upstream's close: as it came, or 4503 when the holding node went away without a close frame. */
function endOf(code: number, reason: Buffer): FeedClose {
  return sendableCode(code) ? { code, reason: reason.toString() } : FEED_CLOSE.moved
}
