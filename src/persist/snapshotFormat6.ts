/*
 * The body of a format 6 snapshot: a tenant's large collections as the
 * columns they are in memory (engine/tableImage.ts), so that a load reads
 * the typed arrays back instead of decoding a million records and writing
 * them into columns a field at a time (format 5 spent most of a load on
 * that: msgpack, the GC of the decoded records, pool lookups, id parsing).
 *
 *   uint32 (big-endian) F, then F bytes: the frame, one msgpack value
 *     {endian: 'LE', pool: the tenant's texts (null: a free code),
 *      tables: per collection its rows, field names, and per column its
 *      chunks: a typed array as [element, offset, length], constants,
 *      misfits as [row, value] pairs; arrayBytes}
 *   zero bytes up to a multiple of 8 of the file's offset
 *   the arrays: each chunk's bytes as they lie in memory (little-endian),
 *     at the offset the frame gives (from here), each aligned to 8 bytes
 *   the tail: slices as formats 3-5 write them (snapshotSlices.ts): the
 *     small collections' records, then the derived state
 *
 * A collection of fewer than COLUMN_MIN_ROWS rows travels as records: its
 * columns would cost a whole chunk's array per field (a 4,096-row chunk
 * for one account), and the observers of small collections (append
 * counters, sums, personal projects) read their records anyway. An
 * account among them is also what a restore under another name renames
 * (tenants/restoreSource.ts takeTenantName) before it loads.
 *
 * A load reads the arrays' bytes into one buffer and makes each array a
 * view of its part of it: one allocation, not one per chunk (thousands for
 * a million records, each an ArrayBuffer the GC tracks). The buffer lives
 * as long as any of its views: a chunk later dropped or copied on a write
 * gives back its bytes only when the tenant's loaded columns all go.
 *
 * Nothing of the indexes is stored: the id → row index, the secondary and
 * range indexes and the pool's counts are rebuilt from the columns, in
 * bulk (ColumnTable.restoreSteps, Collection.finishLoadSteps: a counting
 * sort per index, about 0.3 s for a million time records), which keeps the
 * format free of their layouts and of the process's hash seed.
 */
import os from 'node:os'
import { decodeSnapshotSlice, encodeSnapshotBody, releaseDecodedSource } from './codec.js'
import type { Steps } from '../engine/steps.js'
import type { CodeArray, ColumnChunks, TableImage } from '../engine/tableImage.js'
import { type ColumnSlices, type RecordSlices, type SnapshotBody, type SnapshotSource, SnapshotInvalidError } from './ports.js'
import { bodyOfSlices, sliceValues, storedSlices } from './snapshotSlices.js'
import { LENGTH_BYTES, uint32 } from './snapshotHeader.js'

/** The fewest rows of a collection written as columns (one chunk of rows: engine/rowChunks.ts). */
const COLUMN_MIN_ROWS = 4096
/** Array bytes written per event-loop turn: each turn copies and hashes them (a few ms a megabyte on a busy machine). */
const WRITE_STEP_BYTES = 1024 * 1024
/** Array bytes read (and hashed) per pause of a load: under a millisecond (engine/steps.ts; a megabyte took 5-9 ms on a busy machine). */
const READ_STEP_BYTES = 256 * 1024
const ALIGN = 8

type Element = 'f64' | 'i32' | 'u16' | 'u8'
type AnyArray = Float64Array | CodeArray
type ArrayRef = [Element, number, number]

const ELEMENTS: Record<Element, { new (length: number): AnyArray; new (buffer: ArrayBuffer, byteOffset: number, length: number): AnyArray; BYTES_PER_ELEMENT: number }> = {
  f64: Float64Array,
  i32: Int32Array,
  u16: Uint16Array,
  u8: Uint8Array,
}

function elementOf(array: AnyArray): Element {
  return array instanceof Float64Array ? 'f64' : array instanceof Int32Array ? 'i32' : array instanceof Uint16Array ? 'u16' : 'u8'
}

function aligned(offset: number): number {
  return Math.ceil(offset / ALIGN) * ALIGN
}

function isColumnSlices(recs: readonly unknown[] | RecordSlices | ColumnSlices): recs is ColumnSlices {
  return !Array.isArray(recs) && typeof (recs as Partial<ColumnSlices>).image === 'function'
}

/** Where each array of the images goes (from the start of the arrays), in the order they are met. */
class Layout {
  readonly arrays: { array: AnyArray; offset: number }[] = []
  bytes = 0

  place(array: AnyArray | null): ArrayRef | null {
    if (array === null) return null
    const offset = aligned(this.bytes)
    this.arrays.push({ array, offset })
    this.bytes = offset + array.byteLength
    return [elementOf(array), offset, array.length]
  }

  /** A chunk list's constants as one array: numbers exactly (-0 and all), null as NaN. */
  placeNumbers(values: readonly (number | null | undefined)[]): ArrayRef | null {
    return this.place(Float64Array.from(values, (value) => value ?? Number.NaN))
  }
}

const pairs = <K, V>(map: Map<K, V> | null): [K, V][] | null => (map === null ? null : [...map])

function describeColumn(column: ColumnChunks, layout: Layout): unknown {
  switch (column.kind) {
    case 'id':
      return { kind: 'id', words: column.words.map((words) => layout.place(words)), others: column.others.map(pairs) }
    case 'number':
      return {
        kind: 'number',
        floats: column.floats.map((floats) => layout.place(floats)),
        ints: column.ints.map((ints) => layout.place(ints)),
        constants: layout.placeNumbers(column.constants),
        misfits: pairs(column.misfits),
      }
    case 'code':
    case 'flag':
      return { kind: column.kind, arrays: column.arrays.map((codes) => layout.place(codes)), constants: column.constants.map((constant) => constant ?? 0), misfits: pairs(column.misfits) }
    case 'value':
      return { kind: 'value', arrays: column.arrays, constants: column.constants.map((constant) => (typeof constant === 'symbol' ? null : constant)) }
  }
}

function describeTable(image: TableImage, layout: Layout): unknown {
  return {
    type: image.type,
    rowCount: image.rowCount,
    names: image.names,
    alive: image.alive.map((flags) => layout.place(flags)),
    columns: image.columns.map((column) => describeColumn(column, layout)),
    extras: describeColumn(image.extras, layout),
  }
}

/**
 * A format 6 body as the parts to write, in order, a turn's worth each (see the top), with the records each part
 * completes; `bodyOffset` is where the body starts in the file (the arrays are aligned to the file's offsets).
 */
export function* format6Parts(source: SnapshotSource, bodyOffset: number): IterableIterator<{ parts: Uint8Array[]; records: number }> {
  if (os.endianness() !== 'LE') throw new Error('snapshots of columns are written on little-endian machines only')
  const layout = new Layout()
  const tables: { slices: ColumnSlices; description: unknown }[] = []
  const records: Record<string, readonly unknown[] | RecordSlices> = {}
  for (const [type, recs] of Object.entries(source.collections)) {
    if (isColumnSlices(recs) && recs.size >= (source.columnsFrom ?? COLUMN_MIN_ROWS) && source.pool !== undefined) tables.push({ slices: recs, description: describeTable(recs.image(), layout) })
    else records[type] = recs
  }
  const frame = encodeSnapshotBody({ endian: 'LE', pool: tables.length > 0 ? (source.pool?.texts ?? []) : [], tables: tables.map((table) => table.description), arrayBytes: layout.bytes })
  const arraysAt = arraysStart(bodyOffset, frame.length)
  // The frame in a turn of its own: encoding it (the tenant's texts, every chunk's place) is a turn's work already.
  yield { parts: [uint32(frame.length), frame, new Uint8Array(arraysAt - LENGTH_BYTES - frame.length)], records: 0 }
  let parts: Uint8Array[] = []
  let partBytes = 0
  let written = 0
  for (const { array, offset } of layout.arrays) {
    if (offset > written) parts.push(new Uint8Array(offset - written))
    parts.push(new Uint8Array(array.buffer, array.byteOffset, array.byteLength))
    written = offset + array.byteLength
    partBytes += array.byteLength
    if (partBytes >= WRITE_STEP_BYTES) {
      yield { parts, records: 0 }
      parts = []
      partBytes = 0
    }
  }
  const tableRecords = tables.reduce((sum, table) => sum + table.slices.size, 0)
  if (parts.length > 0 || tableRecords > 0) yield { parts, records: tableRecords }
  yield* storedSlices({ collections: records, derived: source.derived })
}

/** Where the arrays start in a body whose frame is `frameBytes` long: the next multiple of 8 of the file's offset. */
function arraysStart(bodyOffset: number, frameBytes: number): number {
  return aligned(bodyOffset + LENGTH_BYTES + frameBytes) - bodyOffset
}

/** Reads body bytes [offset, offset + into.length) into `into`; called with offsets in order, each byte once. */
export type BodyReader = (into: Uint8Array, offset: number) => void

/**
 * The arrays a frame names, made once the arrays' bytes are read (views of them: format6BodySteps), so a list the
 * frame describes holds null until then.
 */
class Reading {
  readonly wanted: { make: (typeof ELEMENTS)[Element]; length: number; offset: number; list: (AnyArray | null)[]; at: number }[] = []

  constructor(private readonly arrayBytes: number) {}

  /** A list of array references: null in each place, filled as its array is read. */
  arrays(value: unknown): (AnyArray | null)[] {
    if (!Array.isArray(value)) throw new SnapshotInvalidError('bad column: a chunk list is not a list')
    const list: (AnyArray | null)[] = value.map(() => null)
    for (const [at, ref] of value.entries()) this.take(ref, list, at)
    return list
  }

  /** Wants the array `ref` names read into `list[at]` (nothing when ref is null). */
  private take(ref: unknown, list: (AnyArray | null)[], at: number): void {
    if (ref === null) return
    const [element, offset, length] = Array.isArray(ref) ? (ref as unknown[]) : []
    const make = ELEMENTS[element as Element]
    if (make === undefined || !Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || (length as number) < 0) throw new SnapshotInvalidError(`bad column chunk ${JSON.stringify(ref)}`)
    if ((offset as number) < 0 || (offset as number) + (length as number) * make.BYTES_PER_ELEMENT > this.arrayBytes)
      throw new SnapshotInvalidError(`a column chunk at ${String(offset)} runs past the arrays`)
    this.wanted.push({ make, length: length as number, offset: offset as number, list, at })
  }

  list<T>(value: unknown, each: (item: unknown) => T): T[] {
    if (!Array.isArray(value)) throw new SnapshotInvalidError('bad column: a chunk list is not a list')
    return value.map(each)
  }

  map<K, V>(value: unknown): Map<K, V> | null {
    if (value === null || value === undefined) return null
    if (!Array.isArray(value) || !value.every((pair) => Array.isArray(pair) && pair.length === 2)) throw new SnapshotInvalidError('bad column: a map is not a list of pairs')
    return new Map(value as [K, V][])
  }

  /** The constants of a number column, once read: NaN back to null. */
  numbers(value: unknown): (number | null)[] {
    if (value === null || !Array.isArray(value) || value[0] !== 'f64') throw new SnapshotInvalidError('bad column: number constants are not doubles')
    const read: (AnyArray | null)[] = [null]
    this.take(value, read, 0)
    const constants: (number | null)[] = []
    this.after.push(() => {
      for (const float of read[0] as Float64Array) constants.push(Number.isNaN(float) ? null : float)
    })
    return constants
  }

  /** What to do once the arrays are read. */
  readonly after: (() => void)[] = []
}

function columnOf(description: unknown, reading: Reading): ColumnChunks {
  const column = (typeof description === 'object' && description !== null ? description : {}) as Record<string, unknown>
  const taken = (value: unknown) => reading.arrays(value)
  switch (column.kind) {
    case 'id':
      return { kind: 'id', words: taken(column.words) as (Int32Array | null)[], others: reading.list(column.others, (pairs) => reading.map<number, string>(pairs)) }
    case 'number':
      return {
        kind: 'number',
        floats: taken(column.floats) as (Float64Array | null)[],
        ints: taken(column.ints) as (Int32Array | null)[],
        constants: reading.numbers(column.constants),
        misfits: reading.map(column.misfits),
      }
    case 'code':
    case 'flag':
      return { kind: column.kind, arrays: taken(column.arrays) as (Uint8Array | null)[], constants: reading.list(column.constants, Number), misfits: reading.map(column.misfits) }
    case 'value':
      return {
        kind: 'value',
        arrays: reading.list(column.arrays, (values) => (values === null ? null : reading.list(values, (value) => value))),
        constants: reading.list(column.constants, (value) => value),
      }
    default:
      throw new SnapshotInvalidError(`bad column kind ${String(column.kind)}`)
  }
}

function tableOf(description: unknown, reading: Reading): TableImage {
  const table = (typeof description === 'object' && description !== null ? description : {}) as Record<string, unknown>
  const { type, rowCount, names } = table
  if (typeof type !== 'string' || !Number.isSafeInteger(rowCount) || !Array.isArray(names) || !names.every((name) => typeof name === 'string')) throw new SnapshotInvalidError('bad table')
  const alive = reading.arrays(table.alive) as (Uint8Array | null)[]
  const columns = reading.list(table.columns, (column) => columnOf(column, reading))
  const extras = columnOf(table.extras, reading)
  if (extras.kind !== 'value' || columns.length !== names.length) throw new SnapshotInvalidError(`bad table ${type}`)
  return { type, rowCount: rowCount as number, names: names as string[], alive, columns, extras }
}

/** A format 6 body of `bodyBytes` read through `read` (see the top); `bodyOffset` as the writer had it. Pauses every READ_STEP_BYTES of arrays and after each slice. */
export function* format6BodySteps(bodyBytes: number, bodyOffset: number, read: BodyReader): Steps<SnapshotBody> {
  const lengthBytes = new Uint8Array(LENGTH_BYTES)
  read(lengthBytes, 0)
  const frameBytes = Buffer.from(lengthBytes.buffer).readUInt32BE(0)
  const arraysAt = arraysStart(bodyOffset, frameBytes)
  if (arraysAt > bodyBytes) throw new SnapshotInvalidError(`the frame of ${frameBytes} bytes runs past the end of the body (a torn file?)`)
  const frameBuffer = Buffer.alloc(frameBytes)
  read(frameBuffer, LENGTH_BYTES)
  yield
  let frame: Record<string, unknown>
  try {
    frame = decodeSnapshotSlice(frameBuffer) as Record<string, unknown>
  } finally {
    releaseDecodedSource()
  }
  if (typeof frame !== 'object' || frame === null || !Number.isSafeInteger(frame.arrayBytes) || !Array.isArray(frame.pool) || !Array.isArray(frame.tables)) throw new SnapshotInvalidError('bad frame')
  if (frame.endian !== os.endianness()) throw new SnapshotInvalidError(`its columns are ${String(frame.endian)}, this machine is ${os.endianness()}`)
  const arrayBytes = frame.arrayBytes as number
  if (arraysAt + arrayBytes > bodyBytes) throw new SnapshotInvalidError('the arrays run past the end of the body (a torn file?)')
  const reading = new Reading(arrayBytes)
  yield
  const tables = frame.tables.map((table) => tableOf(table, reading))
  read(new Uint8Array(arraysAt - LENGTH_BYTES - frameBytes), LENGTH_BYTES + frameBytes)
  yield
  // The arrays' bytes, read into one buffer a step's worth at a time (not zeroed first: every byte is read over), and
  // each array a view of its part: 70 MB for a million time records, one allocation rather than one per chunk.
  const arrays = Buffer.allocUnsafeSlow(arrayBytes)
  for (let done = 0; done < arrayBytes; ) {
    const piece = Math.min(READ_STEP_BYTES, arrayBytes - done)
    read(arrays.subarray(done, done + piece), arraysAt + done)
    done += piece
    yield
  }
  let at = 0
  for (const { make, length, offset, list, at: place } of reading.wanted.sort((a, b) => a.offset - b.offset)) {
    if (offset < at) throw new SnapshotInvalidError(`column chunks overlap at ${offset}`)
    list[place] = new make(arrays.buffer, arrays.byteOffset + offset, length)
    at = offset + length * make.BYTES_PER_ELEMENT
  }
  for (const then of reading.after) then()
  const tailAt = arraysAt + arrayBytes
  const values = yield* sliceValues(bodyBytes, tailAt, (offset, length) => {
    const bytes = Buffer.allocUnsafe(length)
    read(bytes, offset)
    return bytes
  })
  const pool = { texts: frame.pool.map((text) => (typeof text === 'string' ? text : null)) }
  return { ...(yield* bodyOfSlices(values, 6)), columns: { pool, tables } }
}
