/*
 * Buffers that answers are written into, lent out and given back, so
 * that an answer's bytes land in memory the process has touched before.
 *
 * Why: a new buffer of a few hundred KB comes from malloc, and glibc
 * serves a block that large by mapping fresh pages (above its mmap
 * threshold) or from heap it has just grown. Either way the first write
 * to each 4 KiB page is a page fault. On the benchmark's VM a fault cost
 * about 20 µs, so a page of 100 time records with references expanded
 * (280 KB, 70 pages) spent 1.5 ms faulting, against 0.1–0.2 ms to write
 * it into pages already mapped. Which of the two an answer got changed
 * with glibc's state every few dozen answers (measured as the server's
 * minor faults, field 10 of /proc/<pid>/stat, per request: 70 in the slow
 * stretches, 0 in the fast ones).
 *
 * So json/bytes.ts writes an answer straight into a buffer of
 * ANSWER_BUFFER_BYTES taken from here (`lend`), and the answer's body is
 * a view of that buffer. The HTTP server gives the body back (`giveBack`)
 * once uWS has it: `end` copies what the socket does not take at once.
 * The next answer then writes into the same pages.
 *
 * Only the very view that was lent can give its buffer back, and only
 * once (`lent` maps each lent buffer to its view), so a body kept by
 * mistake after it was given back cannot give back a buffer lent anew to
 * another answer. A body that is never given back (an answer inside a
 * batch, one whose client went away before it was ready) is collected by
 * the GC like any buffer. At most POOLED_BUFFERS_MAX buffers wait here;
 * more given back are left to the GC.
 */
import { assert } from '../assert.js'

/** The size of every lent buffer: the longest answer written as bytes (a longer one goes on as strings; bytes.ts). */
export const ANSWER_BUFFER_BYTES = 1024 * 1024
/** The most buffers kept for reuse (their touched pages stay resident). */
const POOLED_BUFFERS_MAX = 16

const pooled: Buffer[] = []
/** Each lent buffer's memory → the one view allowed to give it back (none yet while the answer is being written). */
const lent = new WeakMap<ArrayBufferLike, Buffer | null>()

/** A buffer of ANSWER_BUFFER_BYTES to write one answer into; give it back with `giveBack`, or with `returnUnused` when the answer did not keep it. */
export function lend(): Buffer {
  const buffer = pooled.pop() ?? Buffer.allocUnsafeSlow(ANSWER_BUFFER_BYTES)
  assert(!lent.has(buffer.buffer), 'a pooled buffer is not lent')
  lent.set(buffer.buffer, null)
  return buffer
}

/** The answer's bytes: the first `length` bytes of a lent buffer, as the view that can give it back. */
export function answerView(buffer: Buffer, length: number): Buffer {
  assert(lent.get(buffer.buffer) === null, 'an answer is made once from a buffer lent for it')
  const view = buffer.subarray(0, length)
  lent.set(buffer.buffer, view)
  return view
}

/** Ends the lending of `memory` (lent, and held by `holder`, the view that may give it back; null: the buffer itself). */
function returned(memory: ArrayBufferLike, holder: Buffer | null): void {
  if (lent.get(memory) !== holder) return
  lent.delete(memory)
  if (pooled.length < POOLED_BUFFERS_MAX) pooled.push(Buffer.from(memory, 0, ANSWER_BUFFER_BYTES))
}

/** A lent buffer the answer did not keep (it went on as strings, or was copied out). */
export function returnUnused(buffer: Buffer): void {
  returned(buffer.buffer, null)
}

/** Gives back the buffer behind an answer's body once nothing reads the body any more; anything else (a string, a body not lent from here, one given back already) is left alone. */
export function giveBack(body: string | Buffer): void {
  if (typeof body !== 'string') returned(body.buffer, body)
}

/** How many buffers wait for reuse (tests). */
export function pooledCount(): number {
  return pooled.length
}
