/*
 * The ports a benchmark run may listen on (`--ports 9100-9199`), for
 * machines where only some ports are open or free. Every server the run
 * starts (the baselines, the empty server, the real server and its admin
 * listener) takes the next port of the range that nothing listens on,
 * found by binding it for a moment on 127.0.0.1; the search goes on from
 * there and wraps around, so servers started one after another get
 * different ports while the range is not used up. Without --ports each
 * server takes any free port, as before.
 */
import net from 'node:net'
import { freePort } from './loadgen.js'

export interface PortRange {
  readonly first: number
  readonly last: number
}

/** `9100-9199` (or one port, `9100`); throws on anything else. */
export function parsePortRange(text: string): PortRange {
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(text.trim())
  const first = Number(match?.[1])
  const last = Number(match?.[2] ?? match?.[1])
  if (match === null || first < 1 || last > 65_535 || first > last) throw new Error(`--ports takes a range such as 9100-9199 (1–65535, first ≤ last), got '${text}'`)
  return { first, last }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

export class PortPicker {
  private cursor: number

  /** `range` null: any free port. */
  constructor(private readonly range: PortRange | null) {
    this.cursor = range?.first ?? 0
  }

  /** A port nothing listens on now: the next free one of the range, or any free one without a range. */
  async next(): Promise<number> {
    const range = this.range
    if (range === null) return freePort()
    const size = range.last - range.first + 1
    for (let tried = 0; tried < size; tried += 1) {
      const port = this.cursor
      this.cursor = port === range.last ? range.first : port + 1
      if (await canListen(port)) return port
    }
    throw new Error(`no free port in ${range.first}-${range.last}`)
  }
}
