/*
 * HTTP as bytes, for tests whose requests a client library would correct
 * (a `\` or `..` in the path, an absolute-form target, a PROXY protocol
 * header before the request): each request on a connection of its own,
 * from a chosen local address (127.0.0.2, 127.0.0.3… are this machine
 * too), read until the server closes it or a time passes.
 */
import net from 'node:net'

export interface RawAnswer {
  /** The status of the answer's first line; null when none came (the server closed, or said nothing in time). */
  readonly status: number | null
  readonly text: string
  /** What follows the head. */
  readonly body: string
}

export interface RawOptions {
  /** The local address the connection comes from (default: the system's choice, 127.0.0.1). */
  readonly localAddress?: string
  /** Bytes sent before the request (a PROXY protocol header). */
  readonly preamble?: Buffer
  readonly waitMs?: number
}

/** A request's text: the request line, the headers, Connection: close, and the body with its length. */
export function rawRequest(method: string, target: string, headers: Record<string, string>, body = ''): string {
  const lines = [`${method} ${target} HTTP/1.1`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), 'Connection: close']
  if (body !== '' || method === 'POST') lines.push(`Content-Length: ${Buffer.byteLength(body)}`)
  return `${lines.join('\r\n')}\r\n\r\n${body}`
}

/** Sends `request` on a connection of its own and resolves with what came back. */
export function rawExchange(port: number, request: string, options: RawOptions = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }) })
    let received = ''
    let finished = false
    const done = () => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      socket.destroy()
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(received)
      const headEnd = received.indexOf('\r\n\r\n')
      resolve({ status: status === null ? null : Number(status[1]), text: received, body: headEnd < 0 ? '' : received.slice(headEnd + 4) })
    }
    const timer = setTimeout(done, options.waitMs ?? 5_000)
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8')
      if (answeredWhole(received)) done()
    })
    socket.on('end', done)
    socket.on('close', done)
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A server that resets the connection after a refusal answered nothing more: what came is the answer.
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') done()
      else if (!finished) {
        finished = true
        clearTimeout(timer)
        reject(error)
      }
    })
    socket.on('connect', () => {
      if (options.preamble !== undefined) socket.write(options.preamble)
      socket.write(request)
    })
  })
}

/** Whether `received` holds a whole answer with a Content-Length (the server may keep the connection a while). */
function answeredWhole(received: string): boolean {
  const headEnd = received.indexOf('\r\n\r\n')
  if (headEnd < 0) return false
  const length = /\r\ncontent-length: *(\d+)/i.exec(received.slice(0, headEnd))
  return length !== null && Buffer.byteLength(received.slice(headEnd + 4)) >= Number(length[1])
}

/** A PROXY protocol v2 header (TCP over IPv4) saying the connection comes from `source`. */
export function proxyV2Header(source: string, destination = '127.0.0.1', sourcePort = 40_000, destinationPort = 80): Buffer {
  const signature = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a])
  const addresses = Buffer.alloc(12)
  for (const [index, part] of source.split('.').entries()) addresses.writeUInt8(Number(part), index)
  for (const [index, part] of destination.split('.').entries()) addresses.writeUInt8(Number(part), 4 + index)
  addresses.writeUInt16BE(sourcePort, 8)
  addresses.writeUInt16BE(destinationPort, 10)
  // Version 2, PROXY command; TCP over IPv4; 12 bytes of addresses.
  return Buffer.concat([signature, Buffer.from([0x21, 0x11, 0x00, 12]), addresses])
}
