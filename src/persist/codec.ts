/*
 * The binary encodings of everything TimeLedger writes to disk. Both use
 * msgpack with fixed options and no shared record structures, so a decoder
 * made fresh in another process (or another version) reads what an encoder
 * wrote: log entries as plain maps, snapshot bodies with msgpackr records
 * whose definitions travel inline in the same buffer.
 */
import { Packr } from 'msgpackr'
import type { LogEntry } from '../engine/logEntry.js'

// copyBuffers: a decoded binary value is a copy, never a view of the buffer it came from (which lmdb-js reuses).
const logPackr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false, copyBuffers: true })
const snapshotPackr = new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: false })

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
  return new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: false }).unpack(bytes)
}

/** A body written as a sequence of separately encoded values (snapshot format 2). */
export function decodeSnapshotValues(bytes: Uint8Array): unknown[] {
  return new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: false }).unpackMultiple(bytes) as unknown[]
}

export function encodePlain(value: unknown): Buffer {
  return logPackr.pack(value)
}

export function decodePlain(bytes: Uint8Array): unknown {
  return logPackr.unpack(bytes)
}
