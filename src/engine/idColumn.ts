/*
 * The ids of a collection's rows: a UUID (every id the engine makes, and
 * every id a client may choose: schema.ts ID_PATTERN) as its 16 bytes, four
 * 32-bit words in an Int32Array chunk, instead of a string of 36 characters
 * (56 bytes of heap, and a pointer); any other id (an access token's
 * SHA-256, a test's "r1") as its string, in a map of its chunk.
 *
 * Words are big-endian in the text's order, so comparing two UUIDs' words
 * as unsigned integers orders them as their texts do (lowercase hex digits
 * and dashes at fixed places order like the numbers they spell).
 *
 * An id is written once, when its row is appended, and never changes: a
 * frozen view of the column (rowChunks.ts) is copies of the chunk lists.
 *
 * `hashOf` hashes an id for the row index (rowIndex.ts) from a seed picked at
 * start-up, so positions differ from one process to the next; a UUID by its
 * words, another id by its characters (FNV-1a), then mixed (murmur3's
 * finalizer) so both its top bits (the shard) and its low bits (the
 * position) are spread. Like V8's own seeded string hash, it is not a
 * keyed hash that resists ids crafted to collide.
 */
import { assert } from '../assert.js'
import { CHUNK_BITS, CHUNK_MASK, CHUNK_ROWS } from './rowChunks.js'
import type { IdChunks } from './tableImage.js'

/** Hex digit value by character code; -1 for anything else (uppercase is not a canonical UUID). */
const HEX_VALUE = new Int8Array(128).fill(-1)
for (let digit = 0; digit < 16; digit += 1) HEX_VALUE['0123456789abcdef'.charCodeAt(digit)] = digit
const HEX_CODE = Uint8Array.from('0123456789abcdef', (char) => char.charCodeAt(0))
const DASH = 45

/** Writes the four words of `id` at `into[at…]` when it is a canonical UUID (lowercase, dashes at 8, 13, 18, 23); false otherwise. */
function parseUuid(id: string, into: Int32Array, at: number): boolean {
  if (id.length !== 36 || id.charCodeAt(8) !== DASH || id.charCodeAt(13) !== DASH || id.charCodeAt(18) !== DASH || id.charCodeAt(23) !== DASH) return false
  let word = 0
  let nibbles = 0
  let out = at
  for (let index = 0; index < 36; index += 1) {
    if (index === 8 || index === 13 || index === 18 || index === 23) continue
    const code = id.charCodeAt(index)
    const value = code < 128 ? (HEX_VALUE[code] as number) : -1
    if (value < 0) return false
    word = (word << 4) | value
    nibbles += 1
    if (nibbles === 8) {
      into[out] = word
      out += 1
      word = 0
      nibbles = 0
    }
  }
  return true
}

/** The text of the UUID whose words are at `words[at…]`. */
export function formatUuid(words: Int32Array, at: number): string {
  const a = words[at] as number
  const b = words[at + 1] as number
  const c = words[at + 2] as number
  const d = words[at + 3] as number
  const h = HEX_CODE
  return String.fromCharCode(
    h[a >>> 28] as number,
    h[(a >>> 24) & 15] as number,
    h[(a >>> 20) & 15] as number,
    h[(a >>> 16) & 15] as number,
    h[(a >>> 12) & 15] as number,
    h[(a >>> 8) & 15] as number,
    h[(a >>> 4) & 15] as number,
    h[a & 15] as number,
    DASH,
    h[b >>> 28] as number,
    h[(b >>> 24) & 15] as number,
    h[(b >>> 20) & 15] as number,
    h[(b >>> 16) & 15] as number,
    DASH,
    h[(b >>> 12) & 15] as number,
    h[(b >>> 8) & 15] as number,
    h[(b >>> 4) & 15] as number,
    h[b & 15] as number,
    DASH,
    h[c >>> 28] as number,
    h[(c >>> 24) & 15] as number,
    h[(c >>> 20) & 15] as number,
    h[(c >>> 16) & 15] as number,
    DASH,
    h[(c >>> 12) & 15] as number,
    h[(c >>> 8) & 15] as number,
    h[(c >>> 4) & 15] as number,
    h[c & 15] as number,
    h[d >>> 28] as number,
    h[(d >>> 24) & 15] as number,
    h[(d >>> 20) & 15] as number,
    h[(d >>> 16) & 15] as number,
    h[(d >>> 12) & 15] as number,
    h[(d >>> 8) & 15] as number,
    h[(d >>> 4) & 15] as number,
    h[d & 15] as number,
  )
}

function mix(hash: number): number {
  let mixed = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b)
  mixed = Math.imul(mixed ^ (mixed >>> 13), 0xc2b2ae35)
  return mixed ^ (mixed >>> 16)
}

function hashWords(words: Int32Array, at: number, seed: number): number {
  let hash = seed ^ 0x811c9dc5
  for (let index = at; index < at + 4; index += 1) hash = Math.imul(hash ^ (words[index] as number), 0x01000193)
  return mix(hash)
}

function hashText(id: string, seed: number): number {
  let hash = seed ^ 0x811c9dc5
  for (let at = 0; at < id.length; at += 1) hash = Math.imul(hash ^ id.charCodeAt(at), 0x01000193)
  return mix(hash)
}

/** An id looked for: its text, and its words when it is a UUID (a reused scratch: valid until the next `probe`). */
export interface IdProbe {
  id: string
  uuid: boolean
  readonly words: Int32Array
  hash: number
}

export class IdView {
  constructor(
    /** Per chunk: 4 words a row (a non-UUID row's are 0). */
    readonly words: (Int32Array | null)[],
    /** Per chunk: offset → the id of a row that is not a UUID; null when none is. */
    readonly others: (Map<number, string> | null)[],
  ) {}

  get(row: number): string {
    const chunk = row >>> CHUNK_BITS
    const other = this.others[chunk]?.get(row & CHUNK_MASK)
    return other ?? formatUuid(this.words[chunk] as Int32Array, (row & CHUNK_MASK) * 4)
  }
}

export class IdColumn extends IdView {
  private readonly scratch: IdProbe = { id: '', uuid: false, words: new Int32Array(4), hash: 0 }

  constructor(private readonly seed: number) {
    super([], [])
  }

  /** The id of a row just appended. */
  write(row: number, id: string): void {
    const chunk = row >>> CHUNK_BITS
    while (this.words.length <= chunk) {
      this.words.push(null)
      this.others.push(null)
    }
    let words = this.words[chunk]
    if (words === null || words === undefined) {
      words = new Int32Array(CHUNK_ROWS * 4)
      this.words[chunk] = words
    }
    // A row written again (an insert refused for a held id left its id behind) holds only its new id.
    if (parseUuid(id, words, (row & CHUNK_MASK) * 4)) this.others[chunk]?.delete(row & CHUNK_MASK)
    else {
      let others = this.others[chunk]
      if (others === null || others === undefined) {
        others = new Map()
        this.others[chunk] = others
      }
      others.set(row & CHUNK_MASK, id)
    }
  }

  /** `id` parsed and hashed for lookups (the one scratch probe, overwritten by the next call). */
  probe(id: string): IdProbe {
    const probe = this.scratch
    probe.id = id
    probe.uuid = parseUuid(id, probe.words, 0)
    probe.hash = probe.uuid ? hashWords(probe.words, 0, this.seed) : hashText(id, this.seed)
    return probe
  }

  /** The probe of the id of `row` (the one scratch probe, as `probe` gives it). */
  probeRow(row: number): IdProbe {
    const chunk = row >>> CHUNK_BITS
    const offset = row & CHUNK_MASK
    const other = this.others[chunk]?.get(offset)
    if (other !== undefined) return this.probe(other)
    const probe = this.scratch
    const words = this.words[chunk] as Int32Array
    probe.words.set(words.subarray(offset * 4, offset * 4 + 4))
    probe.uuid = true
    probe.id = ''
    probe.hash = hashWords(probe.words, 0, this.seed)
    return probe
  }

  /** The hash `probe` gives the id of `row`. */
  hashOfRow(row: number): number {
    const chunk = row >>> CHUNK_BITS
    const other = this.others[chunk]?.get(row & CHUNK_MASK)
    return other === undefined ? hashWords(this.words[chunk] as Int32Array, (row & CHUNK_MASK) * 4, this.seed) : hashText(other, this.seed)
  }

  /** Whether `row` has the probed id. */
  matches(row: number, probe: IdProbe): boolean {
    const chunk = row >>> CHUNK_BITS
    const offset = row & CHUNK_MASK
    const other = this.others[chunk]?.get(offset)
    if (other !== undefined) return other === probe.id
    if (!probe.uuid) return false
    const words = this.words[chunk] as Int32Array
    const at = offset * 4
    const wanted = probe.words
    return words[at] === wanted[0] && words[at + 1] === wanted[1] && words[at + 2] === wanted[2] && words[at + 3] === wanted[3]
  }

  /** Negative, zero or positive as the id of `a` orders before, as or after that of `b` (as their texts compare). */
  compare(a: number, b: number): number {
    const chunkA = a >>> CHUNK_BITS
    const chunkB = b >>> CHUNK_BITS
    const otherA = this.others[chunkA]?.get(a & CHUNK_MASK)
    const otherB = this.others[chunkB]?.get(b & CHUNK_MASK)
    if (otherA === undefined && otherB === undefined) {
      const wordsA = this.words[chunkA] as Int32Array
      const wordsB = this.words[chunkB] as Int32Array
      const atA = (a & CHUNK_MASK) * 4
      const atB = (b & CHUNK_MASK) * 4
      for (let word = 0; word < 4; word += 1) {
        const x = (wordsA[atA + word] as number) >>> 0
        const y = (wordsB[atB + word] as number) >>> 0
        if (x !== y) return x < y ? -1 : 1
      }
      return 0
    }
    const textA = otherA ?? this.get(a)
    const textB = otherB ?? this.get(b)
    return textA < textB ? -1 : textA > textB ? 1 : 0
  }

  /** Every row of the chunk is removed: its words go. */
  dropChunk(chunk: number): void {
    this.words[chunk] = null
    this.others[chunk] = null
  }

  /** Takes a snapshot's chunks (tableImage.ts) as its own; the column held no rows. */
  adopt(image: IdChunks): void {
    assert(this.words.length === 0, 'ids adopted by an empty column')
    for (const words of image.words) this.words.push(words)
    for (const others of image.others) this.others.push(others)
  }

  frozen(): IdView {
    return new IdView(this.words.slice(), this.others.slice())
  }

  arrayBytes(): number {
    let bytes = 0
    for (const words of this.words) bytes += words?.byteLength ?? 0
    return bytes
  }
}
