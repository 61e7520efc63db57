/*
 * A request body read up to a limit, as both listeners read theirs (the API
 * on uWebSockets.js, server.ts; the admin listener on Node's http,
 * admin/adminServer.ts). A body whose Content-Length already says it is
 * over the limit is refused before a byte of it is read
 * (declaredOverLimit); one that arrives without a length, or with a false
 * one, is refused the moment its chunks pass the limit (LimitedBody.add),
 * and nothing more of it is kept. The listener answers the refusal (its
 * error and its status differ by route).
 *
 * Whether the connection stays open after that refusal is
 * drainsRefusedBody's decision. A connection closed while the client is
 * still sending is reset by the kernel (unread bytes in its buffer), and a
 * proxy that receives a reset drops the answer it had not yet passed on:
 * behind HAProxy the client saw a reset, not the 413. So a body of a
 * declared length up to REFUSED_BODY_DRAIN_MAX_BYTES past the limit is read
 * to its end and thrown away (the connection goes on with the next
 * request), as Node's http server and nginx's lingering close do; for a
 * longer one, or one without a length (it could go on forever), the answer
 * asks uWS to close the connection.
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

/** How many bytes past its limit a refused body of a declared length is read and thrown away (64 MiB). */
export const REFUSED_BODY_DRAIN_MAX_BYTES = 64 * 1024 * 1024

/** Whether a refused body is read to its end (the connection kept) rather than cut off: only one of a declared length. */
export function drainsRefusedBody(headers: ReadonlyMap<string, string>, limitBytes: number): boolean {
  const declared = headers.get('content-length')
  return declared !== undefined && declaredBodyBytes(headers) <= limitBytes + REFUSED_BODY_DRAIN_MAX_BYTES
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
    else if (this.more === null) this.more = [this.first, chunk]
    else this.more.push(chunk)
    return true
  }

  /** The whole body, once its last chunk is in. */
  bytes(): Buffer {
    if (this.more !== null) return Buffer.concat(this.more)
    return this.first ?? Buffer.alloc(0)
  }
}
