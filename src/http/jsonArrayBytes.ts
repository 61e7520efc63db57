/*
 * A JSON array answer as bytes, serialized a chunk of elements at a time
 * into a scratch buffer and copied out, with JsonFragments copied in.
 *
 * Why not `JSON.stringify(list)`: in Node 20's V8 the stringifier builds a
 * long result as a rope of parts, and the first conversion of that rope
 * to bytes (uWS's `end`, `Buffer.from`) flattens it. For a page of 100
 * time records with references expanded (276 KB) that flattening took
 * 1.9 ms, four times the 0.5 ms of the stringify itself. A string of a
 * few tens of KB is built flat and converts at memcpy speed.
 *
 * So the elements are stringified in chunks of about CHUNK_BYTES of text
 * (the chunk's element count adapted to the size of the elements seen so
 * far). Each chunk's text is written over the closing bracket of the chunk
 * before it, with a comma in place of the chunk's own opening bracket.
 * Where a chunk holds JsonFragments (the referenced objects of a list,
 * referenceFragments.ts), the text has a marker in each one's place and
 * the fragment's bytes are copied there (jsonFragment.ts says how markers
 * are matched to fragments, and what happens when data looks like one).
 *
 * The answer is copied out of the scratch buffer, because an answer waits
 * for the log's flush before it is written, and meanwhile another answer
 * may be serialized. The copy of 276 KB is a small part of the time the
 * rope conversion took. The result is byte for byte what
 * `Buffer.from(JSON.stringify(items))` gives with every fragment's value
 * in its place (test/jsonArrayBytes.test.ts).
 */
import { assert } from '../domain/errors.js'
import { FRAGMENT_MARKER_JSON, stringifyResolvingFragments, stringifyWithFragments, type JsonFragment } from '../domain/jsonFragment.js'

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

/** Writes `text` from `start` to `end` (UTF-16 positions) at `used`; returns the new end. */
function writeText(used: number, text: string, start = 0, end = text.length): number {
  const part = start === 0 && end === text.length ? text : text.slice(start, end)
  return used + scratchWithRoom(used, UTF8_BYTES_PER_UNIT_MAX * part.length).write(part, used, 'utf8')
}

/** Where each fragment's marker starts in `text`, or null when the markers are more than the fragments. */
function markerPositions(text: string, fragments: readonly JsonFragment[]): number[] | null {
  const positions: number[] = []
  for (let at = text.indexOf(FRAGMENT_MARKER_JSON); at >= 0; at = text.indexOf(FRAGMENT_MARKER_JSON, at + FRAGMENT_MARKER_JSON.length)) {
    if (positions.length === fragments.length) return null
    positions.push(at)
  }
  assert(positions.length === fragments.length, 'every fragment met has its marker in the text')
  return positions
}

/** Writes the JSON of `chunk` at `used`, fragments copied in; returns the new end. */
function writeChunk(used: number, chunk: readonly unknown[]): number {
  const { text, fragments } = stringifyWithFragments(chunk)
  const positions = fragments.length === 0 ? [] : markerPositions(text, fragments)
  if (positions === null) return writeText(used, stringifyResolvingFragments(chunk))
  let from = 0
  positions.forEach((at, index) => {
    const bytes = (fragments[index] as JsonFragment).bytes
    used = writeText(used, text, from, at)
    used += bytes.copy(scratchWithRoom(used, bytes.length), used)
    from = at + FRAGMENT_MARKER_JSON.length
  })
  return writeText(used, text, from)
}

/** `Buffer.from(JSON.stringify(items))` with each JsonFragment's text in its place, without building one long string. */
export function jsonArrayBytes(items: readonly unknown[]): Buffer {
  if (items.length === 0) return Buffer.from('[]')
  // `used` ends on the closing bracket of the last chunk written: the next chunk overwrites it.
  let used = 0
  let perChunk = 1
  for (let start = 0; start < items.length; ) {
    const end = Math.min(items.length, start + perChunk)
    const written = writeChunk(used, items.slice(start, end)) - used
    assert(scratch[used] === OPEN_BRACKET && scratch[used + written - 1] === CLOSE_BRACKET, 'a chunk is a JSON array')
    if (used > 0) scratch[used] = COMMA
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
