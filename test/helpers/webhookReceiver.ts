/*
 * A webhook receiver for tests: a node:http server on a free port of
 * 127.0.0.1 that keeps every POST it gets (headers and raw body) and
 * answers the status `answer` gives (200 by default), and a way to wait
 * until it holds what a test expects.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  /** The status it was answered. */
  readonly status: number
}

export interface Receiver {
  readonly url: string
  readonly received: Received[]
  /** The status the next request gets (called once per request). */
  answer: (request: { path: string; body: string }) => number
  /** Resolves once `done` holds for what was received; rejects after `timeoutMs`. */
  until(done: (received: readonly Received[]) => boolean, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = []
  const receiver: Receiver = {
    url: '',
    received,
    answer: () => 200,
    async until(done, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs
      while (!done(received)) {
        if (Date.now() > deadline)
          throw new Error(
            `the receiver did not get what was expected within ${timeoutMs} ms; it got ${received.length}: ${JSON.stringify(received.map((r) => [r.headers['x-timeledger-event'], r.status]))}`,
          )
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return received
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString()
      const status = receiver.answer({ path: request.url ?? '', body })
      received.push({ path: request.url ?? '', headers: request.headers, body, status })
      response.writeHead(status, { 'Content-Type': 'text/plain' })
      response.end(status < 300 ? 'ok' : 'no')
    })
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  Object.assign(receiver, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
  return receiver
}
