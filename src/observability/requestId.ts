/*
 * Request ids: a random prefix per process and a counter, e.g.
 * `k3Jd9QxA-1f`; unique across restarts (the prefix changes) and cheap (no
 * randomness per request). Sent as X-Request-Id, written to the request log
 * and into the description of 5xx answers. The admin listener names its
 * requests that fail with a bug the same way (in the 500 and the log).
 */
import { randomBytes } from 'node:crypto'

export class RequestIds {
  private readonly prefix = randomBytes(6).toString('base64url')
  private counter = 0

  next(): string {
    this.counter += 1
    return `${this.prefix}-${this.counter.toString(36)}`
  }
}
