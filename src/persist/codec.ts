/*
 * The binary encodings of everything TimeLedger writes to disk. Both use
 * msgpack with fixed options and no shared record structures, so a decoder
 * made fresh in another process (or another version) reads what an encoder
 * wrote: log entries as plain arrays (below), snapshot bodies with msgpackr
 * records whose definitions travel inline in the same buffer.
 *
 * A log entry (format 4) is `[4, at, ops, by]`, each op `['put', type,
 * fields, values]`, `['put', type, fields, values, changed, before]`,
 * `['del', type, id]` or `['del', type, id, seenBy]`: `fields` names the
 * record's fields, comma-separated (field names are identifiers), and
 * `values` holds their values in that order; `changed` and `before` (the
 * same way) the fields an update changed and their values before it;
 * `seenBy` says, as a text the domain reads (domain/audience.ts), who
 * could see a removed record just before; `by` is the id of the user who
 * made the write, or nil (engine/logEntry.ts). Format 3 (`[3, at, ops]`)
 * is the same without `by` and `changed`/`before`, format 2 (`[2, at,
 * ops]`) also without `seenBy`, format 1 wrote `{v: 1, at, ops: [{op,
 * type, rec}]}` with each record a map; all still read. A map costs its decoder a
 * property added by name per field, to an object that then has to be
 * copied into its declaration's shape (recordMaking.ts): 5 µs an entry for a
 * time record, against 2 µs for the arrays, which TenantState.applyEntry
 * writes straight over the declaration's template. Both ends keep the
 * field lists they last saw (FIELD_LISTS_MAX per end), so a list is split
 * or joined once, not per entry.
 *
 * msgpackr keeps the last source it decoded reachable from its module
 * state (a DataView of its memory) until the next decode, with any
 * decoder. When snapshot files were read whole into one buffer, a loaded
 * tenant's file (267 MB for a million time records) stayed in memory for
 * as long as nothing else was decoded: a fifth of the resident memory of
 * the loaded tenant. So whatever decodes a whole file (an older snapshot,
 * an export file) or the slices of one (snapshotReading.ts) decodes one byte
 * afterwards (`releasingSource`, `releaseDecodedSource`), which lets the
 * source go. Binary values of a snapshot are copies for the same reason
 * (a view would hold the file).
 */
import { Packr } from 'msgpackr'
import { assertionFailed } from '../assert.js'
import type { Rec } from '../domain/schema.js'
import type { LogEntry, LoggedEntry, LoggedOp, Op } from '../engine/logEntry.js'

// copyBuffers: a decoded binary value is a copy, never a view of the buffer it came from (which lmdb-js reuses).
const logPackr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false, copyBuffers: true })
const snapshotPackr = new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: false })
const SNAPSHOT_DECODER_OPTIONS = { useRecords: true, mapsAsObjects: true, moreTypes: false, copyBuffers: true }
/** msgpack nil: decoded after a file so that msgpackr's module state points here instead. */
const RELEASE_SOURCE = Uint8Array.of(0xc0)

/** `value`, after msgpackr has let go of the source it was decoded from (see the top). */
function releasingSource<T>(value: T): T {
  logPackr.unpack(RELEASE_SOURCE)
  return value
}

/** The most field lists each end of the log keeps (see the top); past it, the lists are made anew per entry. */
const FIELD_LISTS_MAX = 256

/** The comma-separated field list of each resource type's records, as last written. */
const writtenFieldLists = new Map<string, { readonly names: readonly string[]; readonly list: string }>()
/** Field lists read, split. */
const readFieldLists = new Map<string, readonly string[]>()

function fieldListOf(type: string, names: readonly string[]): string {
  const known = writtenFieldLists.get(type)
  if (known !== undefined && known.names.length === names.length && known.names.every((name, at) => name === names[at])) return known.list
  if (names.some((name) => name.includes(','))) assertionFailed(`a ${type} field name holds a comma: ${names.join(' ')}`)
  const list = names.join(',')
  if (known !== undefined || writtenFieldLists.size < FIELD_LISTS_MAX) writtenFieldLists.set(type, { names, list })
  return list
}

/** The list read last and its names: a log of one kind of write reads the same list entry after entry, and comparing it costs less than hashing it again. */
let lastRead: { list: string; names: readonly string[] } = { list: '', names: [''] }

function namesOf(list: string): readonly string[] {
  if (list === lastRead.list) return lastRead.names
  let names = readFieldLists.get(list)
  if (names === undefined) {
    names = list.split(',')
    if (readFieldLists.size < FIELD_LISTS_MAX) readFieldLists.set(list, names)
  }
  if (readFieldLists.get(list) === names) lastRead = { list, names }
  return names
}

function wireOp(op: Op): unknown[] {
  if (op.op === 'del') return op.seenBy === undefined ? ['del', op.type, op.id] : ['del', op.type, op.id, op.seenBy]
  const names = Object.keys(op.rec)
  const rec: Rec = op.rec
  const put: unknown[] = ['put', op.type, fieldListOf(op.type, names), names.map((name) => rec[name])]
  if (op.was !== undefined) put.push(fieldList(op.type, op.was.names), op.was.values)
  return put
}

/** A list of changed fields: made per update (they vary), checked like a record's. */
function fieldList(type: string, names: readonly string[]): string {
  if (names.some((name) => name.includes(','))) assertionFailed(`a ${type} field name holds a comma: ${names.join(' ')}`)
  return names.join(',')
}

export function encodeLogEntry(entry: LogEntry): Buffer {
  if (entry.v !== 4) assertionFailed(`log entries are written in format 4, not ${entry.v}`)
  return logPackr.pack([entry.v, entry.at, entry.ops.map(wireOp), entry.by ?? null])
}

const notAnEntry = (why: string) => new Error(`not a log entry: ${why}`)

/** An operation of format 2, 3 or 4 (`withSeenBy`: format 3 on, whose removals may say who could see the record; `withWas`: format 4, whose updates may carry the values before). */
function loggedOp(wire: unknown, withSeenBy: boolean, withWas: boolean): LoggedOp {
  if (!Array.isArray(wire) || typeof wire[1] !== 'string') throw notAnEntry('an operation is not [kind, type, …]')
  const [kind, type] = wire as [unknown, string]
  if (kind === 'del' && wire.length === 3 && typeof wire[2] === 'string') return { op: 'del', type, id: wire[2] }
  if (kind === 'del' && withSeenBy && wire.length === 4 && typeof wire[2] === 'string' && typeof wire[3] === 'string') return { op: 'del', type, id: wire[2], seenBy: wire[3] }
  const withBefore = withWas && wire.length === 6
  if (kind !== 'put' || (wire.length !== 4 && !withBefore) || typeof wire[2] !== 'string' || !Array.isArray(wire[3])) throw notAnEntry(`a ${type} operation is neither a put nor a del`)
  const names = namesOf(wire[2])
  if (names.length !== wire[3].length) throw notAnEntry(`a ${type} put has ${names.length} fields and ${wire[3].length} values`)
  if (!withBefore) return { op: 'putFields', type, names, values: wire[3] as unknown[] }
  if (typeof wire[4] !== 'string' || !Array.isArray(wire[5])) throw notAnEntry(`a ${type} put's changed fields are not a field list and its values`)
  const changed = namesOf(wire[4])
  if (changed.length !== wire[5].length) throw notAnEntry(`a ${type} put has ${changed.length} changed fields and ${wire[5].length} values before`)
  return { op: 'putFields', type, names, values: wire[3] as unknown[], was: { names: changed, values: wire[5] as unknown[] } }
}

/** Decodes bytes[0, end); `end` lets lmdb-js hand over its shared read buffer without a copy (embeddedStorage.ts). */
export function decodeLogEntry(bytes: Uint8Array, end = bytes.length): LoggedEntry {
  const decoded: unknown = logPackr.unpack(bytes, end)
  if (Array.isArray(decoded)) {
    const [v, at, ops, by] = decoded as unknown[]
    if (v === 4) {
      if (decoded.length !== 4 || typeof at !== 'number' || !Array.isArray(ops) || (by !== null && typeof by !== 'string')) throw notAnEntry('not [4, at, ops, by]')
      return { v, at, ops: ops.map((op) => loggedOp(op, true, true)), by }
    }
    if ((v !== 2 && v !== 3) || decoded.length !== 3 || typeof at !== 'number' || !Array.isArray(ops)) throw notAnEntry('not [4, at, ops, by], [3, at, ops] nor [2, at, ops]')
    return { v, at, ops: ops.map((op) => loggedOp(op, v === 3, false)) }
  }
  const entry = decoded as LoggedEntry
  if (typeof entry !== 'object' || entry === null || entry.v !== 1 || !Array.isArray(entry.ops) || typeof entry.at !== 'number') {
    throw notAnEntry('neither format 4, 3, 2 nor 1')
  }
  return entry
}

export function encodeSnapshotBody(body: unknown): Buffer {
  return snapshotPackr.pack(body)
}

export function decodeSnapshotBody(bytes: Uint8Array): unknown {
  return releasingSource(new Packr(SNAPSHOT_DECODER_OPTIONS).unpack(bytes))
}

const sliceDecoder = new Packr(SNAPSHOT_DECODER_OPTIONS)

/**
 * One slice of a snapshot body (format 3: each slice a value of its own,
 * its record definitions inline). Whoever decodes a file's slices calls
 * `releaseDecodedSource` after the last one.
 */
export function decodeSnapshotSlice(bytes: Uint8Array): unknown {
  return sliceDecoder.unpack(bytes)
}

/** Lets msgpackr go of the last source decoded (see the top). */
export function releaseDecodedSource(): void {
  releasingSource(null)
}

/** A body written as a sequence of separately encoded values (snapshot format 2). */
export function decodeSnapshotValues(bytes: Uint8Array): unknown[] {
  return releasingSource(new Packr(SNAPSHOT_DECODER_OPTIONS).unpackMultiple(bytes) as unknown[])
}

export function encodePlain(value: unknown): Buffer {
  return logPackr.pack(value)
}

/** A plain value (a file's header, a part of an export file). */
export function decodePlain(bytes: Uint8Array): unknown {
  return releasingSource(logPackr.unpack(bytes))
}
