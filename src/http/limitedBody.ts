/*
 * A request body read up to a limit, as both listeners read theirs (the API
 * on uWebSockets.js, server.ts; the admin listener on Node's http,
 * admin/adminServer.ts). A body whose Content-Length already says it is
 * over the limit is refused before a byte of it is read
 * (declaredOverLimit); one that arrives without a length, or with a false
 * one, is refused the moment its chunks pass the limit (LimitedBody.add),
 * and nothing more of it is kept. The listener answers the refusal (its
 * error and its status differ by route) and closes the connection.
 *
 * Most bodies arrive in one chunk: that chunk is the body, without a copy
 * into a new buffer. The chunks handed in must be the body's own (uWS
 * frees its chunk after the callback: requestBody.ts copies it first).
 */

/** The length a request's Content-Length declares (0 without one; NaN when it is no number). */
export function declaredBodyBytes(headers: ReadonlyMap<string, string>): number {
  return Number(headers.get('content-length') ?? '0')
}

/** Whether a declared length is over the limit (one that is no number is not: the chunks are counted anyway). */
export function declaredOverLimit(declaredBytes: number, limitBytes: number): boolean {
  return Number.isFinite(declaredBytes) && declaredBytes > limitBytes
}

/** A body collected chunk by chunk up to `limitBytes`. */
export class LimitedBody {
  private first: Buffer | null = null
  private more: Buffer[] | null = null
  private receivedBytes = 0

  constructor(readonly limitBytes: number) {}

  /** Keeps a chunk of the body; false (keeping nothing more) once the body is longer than the limit. */
  add(chunk: Buffer): boolean {
    this.receivedBytes += chunk.byteLength
    if (this.receivedBytes > this.limitBytes) {
      this.first = null
      this.more = null
      return false
    }
    if (this.first === null) this.first = chunk
    else (this.more ??= [this.first]).push(chunk)
    return true
  }

  /** The whole body, once its last chunk is in. */
  bytes(): Buffer {
    if (this.more !== null) return Buffer.concat(this.more)
    return this.first ?? Buffer.alloc(0)
  }
}
