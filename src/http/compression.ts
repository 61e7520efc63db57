/*
 * Compressed answers: brotli or gzip (node:zlib) when the client's
 * Accept-Encoding allows one and the answer is worth it — a text type
 * (JSON, XML, JavaScript, CSV, any text/*) of at least COMPRESSION_MIN_BYTES
 * (0: compression off). The coding is the one the client weighs highest
 * (q-values, `*` for any coding not named, q=0 refusing one); at equal
 * weight brotli, which makes the smaller answer for less CPU at these
 * levels. An answer that is a candidate by type and size says `Vary:
 * Accept-Encoding` whether or not this client gets it compressed, so a cache
 * never hands the compressed copy to a client that did not ask for it.
 * Answers that are already encoded (an answer passed on from another node)
 * or that have no body (204, 304, HEAD) are left alone.
 *
 * The levels are the fast ones, chosen from bench/compression.ts on the
 * list of 1000 time records (1.9 MB of JSON; bench/RESULTS.md,
 * "Compression"): brotli quality 1 takes 0.65 ms for 1.9 % of the bytes
 * (quality 4: 3.2 ms for 1.7 %, 11: 314 ms), gzip level 3 1.75 ms for
 * 2.9 % (level 6: 4.2 ms for 2.3 %); the server spends 7.4 ms of CPU on
 * the answer itself. On a small answer either costs 10–25 µs, a tenth of
 * the cheapest answer's own cost; the default threshold (config.ts) is
 * where that buys less than half a TCP segment.
 * A whole answer is compressed at once (compressAnswer); an answer written
 * as a stream (an export, streamedBody.ts) goes through compressionStream
 * with the same levels, a chunk at a time, whatever its length. An encoded
 * answer's strong ETag is made weak.
 */
import zlib from 'node:zlib'
import { Readable, type Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ApiResponse } from './response.js'
import { StreamedBody } from './streamedBody.js'
import { withVary } from './varyHeader.js'

export type ContentCoding = 'br' | 'gzip'

/** Brotli quality (0–11) of compressed answers. */
export const BROTLI_QUALITY = 1
/** Gzip level (1–9) of compressed answers. */
export const GZIP_LEVEL = 3

/** Codings we produce, in the order of preference at equal weight. */
const PRODUCED: readonly ContentCoding[] = ['br', 'gzip']

/** A coding's weight in Accept-Encoding: its own q, else the q of `*`, else 0 (not acceptable). */
function weights(acceptEncoding: string): Map<string, number> {
  const found = new Map<string, number>()
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.split(';').map((piece) => piece.trim().toLowerCase())
    if (name === undefined || name === '') continue
    let q = 1
    for (const param of params) {
      const match = /^q\s*=\s*([01](?:\.\d{0,3})?)$/.exec(param)
      if (match !== null) q = Math.min(1, Number(match[1]))
    }
    found.set(name === 'x-gzip' ? 'gzip' : name, q)
  }
  return found
}

/** The coding to answer in for this Accept-Encoding, or null: send the answer as it is. */
export function chooseCoding(acceptEncoding: string | undefined): ContentCoding | null {
  if (acceptEncoding === undefined || acceptEncoding === '') return null
  const given = weights(acceptEncoding)
  const any = given.get('*') ?? 0
  let best: ContentCoding | null = null
  let bestWeight = 0
  for (const coding of PRODUCED) {
    const weight = given.get(coding) ?? any
    if (weight > bestWeight) {
      best = coding
      bestWeight = weight
    }
  }
  return best
}

/** Whether a Content-Type is text worth compressing (images, archives and XLSX are compressed already). */
export function isCompressibleType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false
  let known = compressibleTypes.get(contentType)
  if (known === undefined) {
    known = compressibleType(contentType)
    if (compressibleTypes.size < COMPRESSIBLE_TYPES_KEPT_MAX) compressibleTypes.set(contentType, known)
  }
  return known
}

/** The answer of isCompressibleType by Content-Type as written: an answer's type is one of a few (an uploaded file's are more). */
const compressibleTypes = new Map<string, boolean>()
/** Content-Types whose answer is kept (past it, they are worked out each time). */
const COMPRESSIBLE_TYPES_KEPT_MAX = 64

function compressibleType(contentType: string): boolean {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? ''
  // An event stream is written as events happen: a compressor would hold them back until its block fills.
  if (type === 'text/event-stream') return false
  return type.startsWith('text/') || /^application\/(?:json|xml|javascript|[\w.-]+\+(?:json|xml))$/.test(type) || type === 'image/svg+xml'
}

/** One body compressed in `coding` at the levels above. */
export function compressBytes(body: Buffer, coding: ContentCoding): Buffer {
  if (coding === 'br') {
    return zlib.brotliCompressSync(body, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength },
    })
  }
  return zlib.gzipSync(body, { level: GZIP_LEVEL })
}

/** A stream compressing in `coding` at the same levels, for an answer written in pieces. */
export function compressionStream(coding: ContentCoding): Transform {
  if (coding === 'br') {
    return zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } })
  }
  return zlib.createGzip({ level: GZIP_LEVEL })
}

/** The header `name` (lower case) under any capitalisation: the name's length is compared before the letters. */
function header(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  for (const key in headers) if (key.length === name.length && key.toLowerCase() === name) return headers[key]
  return undefined
}

/** Whether a body is shorter than `minBytes` in UTF-8, a string measured only when its length cannot tell. */
function shorterThan(body: string | Buffer | StreamedBody, minBytes: number): boolean {
  // A streamed answer's length is not known before it is written; it is large by nature (an export).
  if (body instanceof StreamedBody) return false
  if (typeof body !== 'string') return body.byteLength < minBytes
  // A UTF-16 unit is 1 to 3 bytes of UTF-8.
  if (body.length >= minBytes) return false
  return body.length * 3 < minBytes || Buffer.byteLength(body) < minBytes
}

/**
 * The answer as it should be written for a client sending `acceptEncoding`: compressed when it is a candidate (text,
 * at least `minBytes`, not encoded yet, a status with a body) and the client takes brotli or gzip; the same answer
 * otherwise. `minBytes` 0: never.
 */
export function compressAnswer(response: ApiResponse, acceptEncoding: string | undefined, minBytes: number, head: boolean): ApiResponse {
  const { status, headers, body } = response
  if (minBytes === 0 || head || status === 204 || status === 304 || status < 200) return response
  if (shorterThan(body, minBytes) || header(headers, 'content-encoding') !== undefined || !isCompressibleType(headers['Content-Type'] ?? header(headers, 'content-type'))) return response
  const varied = withVary(headers, 'Accept-Encoding')
  const coding = chooseCoding(acceptEncoding)
  if (coding === null) return { ...response, headers: varied }
  const compressed =
    body instanceof StreamedBody ? new StreamedBody(compressedChunks(body.chunks, coding), body.discard, body.clientGone) : compressBytes(typeof body === 'string' ? Buffer.from(body) : body, coding)
  return { ...response, headers: { ...weakened(varied), 'Content-Encoding': coding }, body: compressed }
}

/**
 * The chunks of a streamed answer compressed as they come, pulled at the reader's pace; a reader that stops early
 * (the client went away) ends the compressor and, through the pipeline, the source's iteration.
 */
async function* compressedChunks(chunks: AsyncIterable<Buffer>, coding: ContentCoding): AsyncGenerator<Buffer> {
  const compressor = compressionStream(coding)
  const piped = pipeline(Readable.from(chunks, { objectMode: false }), compressor).catch(() => undefined)
  try {
    for await (const chunk of compressor) yield chunk as Buffer
  } finally {
    compressor.destroy()
    await piped
  }
}

/**
 * A strong ETag names one representation's bytes, and the encoded answer's bytes are others: its tag is made weak
 * (If-None-Match compares weakly, If-Match reads the version in it: both still match it).
 */
function weakened(headers: Record<string, string>): Record<string, string> {
  const name = Object.keys(headers).find((key) => key.length === 4 && key.toLowerCase() === 'etag')
  const tag = name === undefined ? undefined : headers[name]
  if (name === undefined || tag === undefined || tag.startsWith('W/')) return headers
  return { ...headers, [name]: `W/${tag}` }
}
