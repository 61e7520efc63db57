/*
 * An answer's body that is written while it is made: an async iterable of
 * byte chunks (an export of a hundred thousand time records is never held
 * whole). The HTTP listener pulls one chunk at a time and pulls the next
 * only once the socket took the last one (streamedAnswer.ts), so the source
 * runs at the client's pace; a source that holds resources releases them in
 * its `finally` (the listener ends the iteration early, calling `return`,
 * when the client goes away), or in `discard` when it is never read; a
 * source that may wait long for its next chunk learns of a client gone
 * meanwhile from `clientGone`. Whatever changes the bytes on the way (a
 * compressor) wraps `chunks` in a new StreamedBody.
 */

export class StreamedBody {
  /**
   * `discard`: releases the source when its body is never read (a HEAD answer, a client gone before the answer).
   * `clientGone`: told at once when the client goes away while the listener waits for the next chunk (a quiet change
   * feed), so that the source may end now instead of when it next has something to send.
   */
  constructor(
    readonly chunks: AsyncIterable<Buffer>,
    readonly discard: () => void = () => {},
    readonly clientGone: () => void = () => {},
  ) {}
}

/** The whole body as bytes: for the few places that need it at once (a forwarded answer read back, tests). */
export async function wholeBody(body: string | Buffer | StreamedBody): Promise<Buffer> {
  if (typeof body === 'string') return Buffer.from(body)
  if (Buffer.isBuffer(body)) return body
  const parts: Buffer[] = []
  for await (const chunk of body.chunks) parts.push(chunk)
  return Buffer.concat(parts)
}
