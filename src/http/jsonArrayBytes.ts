/*
 * A JSON array answer as bytes, serialized a few elements at a time.
 *
 * Why not `JSON.stringify(list)`: in Node 20's V8 the stringifier builds a
 * long result as a rope of parts, and the first conversion of that rope
 * to bytes (uWS's `end`, `Buffer.from`) flattens it. For a page of 100
 * time records with references expanded (276 KB) that flattening took
 * 1.9 ms, four times the 0.5 ms of the stringify itself. A string of a
 * few tens of KB is built flat and converts at memcpy speed.
 *
 * So the elements are stringified in chunks of about CHUNK_BYTES (the
 * chunk's element count is adapted to the size of the elements seen so
 * far). Each chunk's text is written into a scratch buffer, over the
 * closing bracket of the chunk before it, with a comma in place of the
 * chunk's own opening bracket. The answer is then copied out of the
 * scratch buffer, because an answer waits for the log's flush before it is
 * written, and meanwhile another answer may be serialized. The copy of
 * 276 KB is a small part of the time the rope conversion took.
 *
 * The result is byte for byte what `Buffer.from(JSON.stringify(list))`
 * gives (test/jsonArrayBytes.test.ts).
 */
import { assert } from '../domain/errors.js'

/** About how much JSON text one `JSON.stringify` call produces. */
const CHUNK_BYTES = 32 * 1024
/** The scratch buffer's size when it is not needed larger. */
const SCRATCH_BYTES = 1024 * 1024
/** A scratch buffer grown above this for one large answer is dropped after it. */
const SCRATCH_KEPT_MAX_BYTES = 8 * 1024 * 1024
/** The most bytes UTF-8 needs per UTF-16 code unit. */
const UTF8_BYTES_PER_UNIT_MAX = 3

const OPEN_BRACKET = 0x5b
const COMMA = 0x2c
const CLOSE_BRACKET = 0x5d

let scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES)

/** The scratch buffer with room for `extra` more bytes after the first `used`. */
function scratchWithRoom(used: number, extra: number): Buffer {
  if (scratch.length - used >= extra) return scratch
  const grown = Buffer.allocUnsafeSlow(Math.max(2 * scratch.length, used + extra))
  scratch.copy(grown, 0, 0, used)
  scratch = grown
  return scratch
}

/** `Buffer.from(JSON.stringify(items))`, without building one long string. */
export function jsonArrayBytes(items: readonly unknown[]): Buffer {
  if (items.length === 0) return Buffer.from('[]')
  // `used` ends on the closing bracket of the last chunk written: the next chunk overwrites it.
  let used = 0
  let perChunk = 1
  for (let start = 0; start < items.length; ) {
    const end = Math.min(items.length, start + perChunk)
    const text = JSON.stringify(items.slice(start, end))
    const buffer = scratchWithRoom(used, UTF8_BYTES_PER_UNIT_MAX * text.length)
    const written = buffer.write(text, used, 'utf8')
    assert(buffer[used] === OPEN_BRACKET && buffer[used + written - 1] === CLOSE_BRACKET, 'a chunk is a JSON array')
    if (used > 0) buffer[used] = COMMA
    used += written - 1
    perChunk = Math.max(1, Math.floor((CHUNK_BYTES * (end - start)) / written))
    start = end
  }
  scratch[used] = CLOSE_BRACKET
  used += 1
  const answer = Buffer.allocUnsafeSlow(used)
  scratch.copy(answer, 0, 0, used)
  if (scratch.length > SCRATCH_KEPT_MAX_BYTES) scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES)
  return answer
}
