/*
 * The binary encodings of everything TimeLedger writes to disk. Both use
 * msgpack with fixed options and no shared record structures, so a decoder
 * made fresh in another process (or another version) reads what an encoder
 * wrote: log entries as plain maps, snapshot bodies with msgpackr records
 * whose definitions travel inline in the same buffer.
 *
 * msgpackr keeps the last source it decoded reachable from its module
 * state (a DataView of its memory) until the next decode, with any
 * decoder. When snapshot files were read whole into one buffer, a loaded
 * tenant's file (267 MB for a million time records) stayed in memory for
 * as long as nothing else was decoded: a fifth of the resident memory of
 * the loaded tenant. So whatever decodes a whole file (an older snapshot,
 * an export file) or the slices of one (snapshotFile.ts) decodes one byte
 * afterwards (`releasingSource`, `releaseDecodedSource`), which lets the
 * source go. Binary values of a snapshot are copies for the same reason
 * (a view would hold the file).
 */
import { Packr } from 'msgpackr'
import type { LogEntry } from '../engine/logEntry.js'

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

export function encodeLogEntry(entry: LogEntry): Buffer {
  return logPackr.pack(entry)
}

/** Decodes bytes[0, end); `end` lets lmdb-js hand over its shared read buffer without a copy (logStore.ts). */
export function decodeLogEntry(bytes: Uint8Array, end = bytes.length): LogEntry {
  const entry = logPackr.unpack(bytes, end) as LogEntry
  if (typeof entry !== 'object' || entry === null || !Array.isArray(entry.ops) || typeof entry.at !== 'number') {
    throw new Error('not a log entry')
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
