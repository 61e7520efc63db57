/*
 * Records in slices, the body of snapshot formats 1 to 5 and the tail of
 * format 6 (snapshotFile.ts): a sequence of slices, each a uint32
 * (big-endian) byte length and that many bytes of one msgpack value
 * {type, fields, strings, recs: Rec[]} holding at most SLICE_RECORDS
 * records, each distinct text of the `fields` written once in `strings`
 * (format 4 on; sliceStrings.ts); then, from format 5 on, a slice
 * {derived, part} per part of each state derived from the records that
 * the file keeps so that a load need not rebuild it (the report totals:
 * reportTotals.ts; each read back and checked by its owner). Format 3
 * slices are {type, recs} with their texts inline, format 2 bodies lack
 * the lengths, and format 1 is one value {collections: {type: Rec[]}}.
 *
 * The lengths let a reader take a slice without decoding past it (a
 * length that runs past the end of the body is a torn file), and a writer
 * encode a slice per event-loop turn, never holding more than one.
 */
import { decodeSnapshotSlice, encodeSnapshotBody, releaseDecodedSource } from './codec.js'
import type { Steps } from '../engine/steps.js'
import { TextPool } from '../engine/textPool.js'
import { type RecordSlices, type SnapshotBody, type SnapshotSource, SnapshotInvalidError } from './ports.js'
import { resolveStringTable, SliceStringsError, withStringTable, type SliceOfRecords } from './sliceStrings.js'
import { LENGTH_BYTES, uint32 } from './snapshotHeader.js'

/** Records per slice written: a writer encodes one per event-loop turn (5,000 took up to 40 ms on a busy machine, 500 projects 8-19 ms); any count reads. */
export const SLICE_RECORDS = 500

function* slicesOf(body: SnapshotSource): IterableIterator<SliceOfRecords> {
  for (const [type, recs] of Object.entries(body.collections)) {
    if (isRecordArray(recs)) {
      for (let start = 0; start < recs.length; start += SLICE_RECORDS) yield { type, recs: recs.slice(start, start + SLICE_RECORDS) }
    } else for (const slice of recs.slices(SLICE_RECORDS)) yield { type, recs: slice as unknown[] }
  }
}

function isRecordArray(recs: readonly unknown[] | RecordSlices): recs is readonly unknown[] {
  return Array.isArray(recs)
}

/** The values of `body`'s slices (see the top), with how many records each holds. */
function* sliceValuesOf(body: SnapshotSource): IterableIterator<{ value: unknown; records: number }> {
  for (const slice of slicesOf(body)) yield { value: withStringTable(slice.type, slice.recs as Record<string, unknown>[]), records: slice.recs.length }
  for (const [name, parts] of Object.entries(body.derived ?? {})) for (const part of parts) yield { value: { derived: name, part }, records: 0 }
}

/** Each slice of `body` as the body stores it: its byte length and its bytes, with how many records it holds. */
export function* storedSlices(body: SnapshotSource): IterableIterator<{ parts: [Buffer, Buffer]; records: number }> {
  for (const { value, records } of sliceValuesOf(body)) {
    const encoded = encodeSnapshotBody(value)
    yield { parts: [uint32(encoded.length), encoded], records }
  }
}

/**
 * The slice values of a body of `format` put together (format 1's one value as a slice per collection), equal texts
 * shared across the file: from format 4 on through each slice's table, before that record by record.
 */
export function* bodyOfSlices(values: unknown[], format: number): Steps<SnapshotBody> {
  const collections: Record<string, unknown[]> = {}
  const derived: Record<string, unknown[]> = {}
  const texts = new TextPool()
  for (const value of values) {
    const slice = value as { type?: unknown; recs?: unknown; derived?: unknown; part?: unknown }
    if (format >= 5 && typeof slice === 'object' && slice !== null && typeof slice.derived === 'string') {
      const parts = derived[slice.derived] ?? []
      parts.push(slice.part)
      derived[slice.derived] = parts
      yield
      continue
    }
    if (typeof slice !== 'object' || slice === null || typeof slice.type !== 'string' || !Array.isArray(slice.recs)) {
      throw new SnapshotInvalidError('bad body slice')
    }
    const { type, recs } = format >= 4 ? withTextsBack(slice as SliceOfRecords, texts) : withTextsShared(slice as SliceOfRecords, texts)
    const collection = collections[type] ?? []
    collections[type] = collection
    for (const rec of recs) collection.push(rec)
    yield
  }
  return { collections, derived }
}

function withTextsBack(slice: SliceOfRecords, texts: TextPool): SliceOfRecords {
  try {
    return resolveStringTable(slice, (text) => texts.share(text))
  } catch (error) {
    if (error instanceof SliceStringsError) throw new SnapshotInvalidError(`bad body slice: ${error.message}`)
    throw error
  }
}

/** A slice of an older format with the texts of its records (all but their ids) shared through `texts`, in place. */
function withTextsShared(slice: SliceOfRecords, texts: TextPool): SliceOfRecords {
  for (const rec of slice.recs) {
    if (typeof rec !== 'object' || rec === null) continue
    const fields = rec as Record<string, unknown>
    for (const name in fields) {
      const value = fields[name]
      if (name !== 'id' && typeof value === 'string') fields[name] = texts.share(value)
    }
  }
  return slice
}

/** The length of the slice whose prefix starts at `offset` of a body of `bodyBytes`; a torn file when it runs past the end. */
function sliceLength(prefix: Buffer, offset: number, bodyBytes: number): number {
  const length = prefix.readUInt32BE(0)
  if (offset + LENGTH_BYTES + length > bodyBytes) throw new SnapshotInvalidError(`the slice at body byte ${offset} runs past the end of the body`)
  return length
}

/** A slice's value, or the error of a damaged file (a wrong checksum is only found at the end: the value may be garbage). */
function decodedSlice(bytes: Buffer, offset: number): unknown {
  try {
    return decodeSnapshotSlice(bytes)
  } catch (error) {
    throw new SnapshotInvalidError(`the slice at body byte ${offset} does not decode (${error instanceof Error ? error.message : String(error)})`)
  }
}

/**
 * The slice values of a body of format 3 or later of `bodyBytes`, each piece of it
 * read by `bytesAt` (body offset, length; the bytes need to stay valid only
 * until the next call).
 */
export function* sliceValues(bodyBytes: number, from: number, bytesAt: (offset: number, length: number) => Buffer): Steps<unknown[]> {
  const values: unknown[] = []
  try {
    for (let offset = from; offset < bodyBytes; ) {
      const length = sliceLength(bytesAt(offset, LENGTH_BYTES), offset, bodyBytes)
      values.push(decodedSlice(bytesAt(offset + LENGTH_BYTES, length), offset))
      offset += LENGTH_BYTES + length
      yield
    }
  } finally {
    releaseDecodedSource()
  }
  return values
}

export function checkedBody(body: SnapshotBody): SnapshotBody {
  if (typeof body !== 'object' || body === null || typeof body.collections !== 'object') throw new SnapshotInvalidError('bad body')
  return body
}
