/*
 * JSON as bytes, serialized into a lent buffer (answerBuffers.ts), with
 * JsonFragments copied in: `jsonListBody` for answers that are lists (a
 * chunk of elements at a time; the body of the answer), `jsonValueBytes`
 * for any other value.
 *
 * Why not `JSON.stringify(list)`: in Node 20's V8 the stringifier builds a
 * long result as a rope of parts, and the first conversion of that rope
 * to bytes (uWS's `end`, `Buffer.from`) flattens it. For a page of 100
 * time records with references expanded (276 KB) that flattening took
 * 1.9 ms, four times the 0.5 ms of the stringify itself. A string of a
 * few tens of KB is built flat and converts at memcpy speed.
 *
 * So the elements are stringified in chunks of about CHUNK_CHARS of text
 * (the chunk's element count adapted to the size of the elements seen so
 * far), and each chunk's text is written without its brackets. An element
 * that is a JsonFragment itself (a row kept whole) is copied in as it is.
 * Where a chunk holds JsonFragments (rows and referenced objects of a
 * list, domain/renderedJson.ts), the text has a marker in each one's place
 * and the fragment's bytes are copied there (fragment.ts says how markers
 * are matched to fragments, and what happens when data looks like one).
 *
 * The answer is written straight into a buffer lent by
 * json/answerBuffers.ts, and its body is a view of that buffer, which the
 * HTTP server gives back once uWS has the bytes: a fresh buffer of that
 * size would cost a page fault per 4 KiB page written (answerBuffers.ts
 * says how much). An answer that does not fit in the buffer
 * (ANSWER_BUFFER_BYTES) goes on as a list of strings joined at the end,
 * as JSON.stringify's own result would be, and the buffer goes back at
 * once: with clients stalling on several answers of megabytes, buffers
 * that size from malloc stayed with the process after the clients went
 * away (glibc serves blocks of that size again from its own heap once one
 * was freed), where V8 gives its own pages back. `jsonValueBytes` copies
 * its result out (a JsonFragment is kept for long) and returns the buffer.
 * The result is byte for byte what `Buffer.from(JSON.stringify(items))`
 * gives with every fragment's value in its place (test/unit/json/jsonBytes.test.ts).
 */
import { assert } from '../assert.js'
import { ANSWER_BUFFER_BYTES, answerView, lend, returnUnused } from './answerBuffers.js'
import { FRAGMENT_MARKER_JSON, JsonFragment, stringifyResolvingFragments, stringifyWithFragments } from './fragment.js'

/** About how much JSON text one `JSON.stringify` call of a list produces (UTF-16 units). */
const CHUNK_CHARS = 32 * 1024
/** The most bytes UTF-8 needs per UTF-16 code unit. */
const UTF8_BYTES_PER_UNIT_MAX = 3

/** One answer's JSON as it is written: bytes in a lent buffer, then, once long, strings. */
class AnswerText {
  private readonly buffer = lend()
  private used = 0
  private strings: string[] | null = null

  /** Appends `text` from `start` to `end` (UTF-16 positions). */
  text(text: string, start = 0, end = text.length): void {
    if (start >= end) return
    const part = start === 0 && end === text.length ? text : text.slice(start, end)
    if (this.asBytes(UTF8_BYTES_PER_UNIT_MAX * part.length)) this.used += this.buffer.write(part, this.used, 'utf8')
    else (this.strings as string[]).push(part)
  }

  /** Appends one ASCII character (a bracket or a comma). */
  ascii(code: number): void {
    if (this.asBytes(1)) {
      this.buffer[this.used] = code
      this.used += 1
    } else (this.strings as string[]).push(String.fromCharCode(code))
  }

  bytes(bytes: Buffer): void {
    if (this.asBytes(bytes.length)) this.used += bytes.copy(this.buffer, this.used)
    else (this.strings as string[]).push(bytes.toString('utf8'))
  }

  /** The answer: a view of the lent buffer (to be given back: answerBuffers.ts), or the strings joined. */
  lentResult(): Buffer | string {
    if (this.strings === null) return answerView(this.buffer, this.used)
    returnUnused(this.buffer)
    return this.strings.join('')
  }

  /** The answer as bytes of its own; the lent buffer goes back. */
  ownBytes(): Buffer {
    const bytes = this.strings === null ? Buffer.from(this.buffer.subarray(0, this.used)) : Buffer.from(this.strings.join(''))
    returnUnused(this.buffer)
    return bytes
  }

  /**
   * True while the answer is bytes and `extra` more fit in the lent
   * buffer. The first time they do not, the bytes so far become the
   * answer's first string, and it goes on as strings.
   */
  private asBytes(extra: number): boolean {
    if (this.strings !== null) return false
    if (ANSWER_BUFFER_BYTES - this.used >= extra) return true
    this.strings = [this.buffer.toString('utf8', 0, this.used)]
    return false
  }
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

/**
 * Appends the JSON of `value`, fragments copied in, without its first and
 * last `trim` characters (a chunk's brackets); returns the length of the
 * text JSON.stringify made.
 */
function writeJson(out: AnswerText, value: unknown, trim: 0 | 1): number {
  const { text, fragments } = stringifyWithFragments(value)
  const positions = fragments.length === 0 ? [] : markerPositions(text, fragments)
  if (positions === null) {
    const resolved = stringifyResolvingFragments(value)
    out.text(resolved, trim, resolved.length - trim)
    return resolved.length
  }
  let from = trim
  positions.forEach((at, index) => {
    out.text(text, from, at)
    out.bytes((fragments[index] as JsonFragment).bytes)
    from = at + FRAGMENT_MARKER_JSON.length
  })
  out.text(text, from, text.length - trim)
  return text.length
}

/**
 * The body of a list answer: `JSON.stringify(items)` as bytes (strings when
 * long), each JsonFragment's text in its place. The bytes are a lent
 * buffer's: whoever sends the answer gives them back (answerBuffers.ts).
 */
export function jsonListBody(items: readonly unknown[]): Buffer | string {
  const out = new AnswerText()
  out.ascii(OPEN_BRACKET)
  let perChunk = 1
  for (let start = 0; start < items.length; ) {
    if (start > 0) out.ascii(COMMA)
    const first = items[start]
    if (first instanceof JsonFragment) {
      // An element that is a fragment (a kept row) is its bytes: nothing to stringify, no marker to look for.
      out.bytes(first.bytes)
      start += 1
      continue
    }
    let end = start + 1
    while (end < items.length && end - start < perChunk && !(items[end] instanceof JsonFragment)) end += 1
    const chunkChars = writeJson(out, items.slice(start, end), 1)
    perChunk = Math.max(1, Math.floor((CHUNK_CHARS * (end - start)) / chunkChars))
    start = end
  }
  out.ascii(CLOSE_BRACKET)
  return out.lentResult()
}

const OPEN_BRACKET = 0x5b
const COMMA = 0x2c
const CLOSE_BRACKET = 0x5d

/** `Buffer.from(JSON.stringify(value))` with each JsonFragment's text in its place (for a value that is not a long list). */
export function jsonValueBytes(value: unknown): Buffer {
  const out = new AnswerText()
  writeJson(out, value, 0)
  return out.ownBytes()
}
