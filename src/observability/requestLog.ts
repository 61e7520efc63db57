/*
 * The request log: one JSON line per answered request (time in epoch ms,
 * request id, method, route pattern, tenant, status, duration in ms,
 * response bytes). Lines are gathered and handed to the sink at most every
 * FLUSH_EVERY_MS (or at once when 64 KiB are waiting), so a busy server
 * makes a few large writes a second instead of one per request or per
 * event-loop turn (measured: a write per turn cost a fifth of the
 * throughput of a cheap read, see the README). flush() empties the buffer
 * at a stop; a kill -9 loses at most the last FLUSH_EVERY_MS of lines.
 */

export interface RequestLogLine {
  time: number
  requestId: string
  method: string
  route: string
  tenant: string | null
  status: number
  durationMs: number
  bytes: number
}

const FLUSH_AT_BYTES = 64 * 1024
export const FLUSH_EVERY_MS = 50

export class RequestLog {
  private pending = ''
  private timer: NodeJS.Timeout | null = null

  /** `sink` receives whole lines, many at once; the default writes to stdout. */
  constructor(private readonly sink: (chunk: string) => void = (chunk) => void process.stdout.write(chunk)) {}

  write(line: RequestLogLine): void {
    this.pending += `${JSON.stringify(line)}\n`
    if (this.pending.length >= FLUSH_AT_BYTES) this.flush()
    else if (this.timer === null) {
      this.timer = setTimeout(() => this.flush(), FLUSH_EVERY_MS)
      this.timer.unref()
    }
  }

  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    if (this.pending === '') return
    const chunk = this.pending
    this.pending = ''
    this.sink(chunk)
  }
}
