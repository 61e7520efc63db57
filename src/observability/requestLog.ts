/*
 * The request log: one JSON line per answered request (time in epoch ms,
 * request id, method, route pattern, tenant, status, duration in ms,
 * response bytes). Lines are gathered and handed to the sink once per
 * event-loop turn (or when 64 KiB are waiting), so a busy server makes one
 * write per turn instead of one per request; flush() empties the buffer at
 * a stop.
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

export class RequestLog {
  private pending = ''
  private scheduled = false

  /** `sink` receives whole lines, many at once; the default writes to stdout. */
  constructor(private readonly sink: (chunk: string) => void = (chunk) => void process.stdout.write(chunk)) {}

  write(line: RequestLogLine): void {
    this.pending += `${JSON.stringify(line)}\n`
    if (this.pending.length >= FLUSH_AT_BYTES) this.flush()
    else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => this.flush())
    }
  }

  flush(): void {
    this.scheduled = false
    if (this.pending === '') return
    const chunk = this.pending
    this.pending = ''
    this.sink(chunk)
  }
}
