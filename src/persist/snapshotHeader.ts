/*
 * The start of every snapshot (snapshotFile.ts says what follows):
 *
 *   bytes 0..7    magic "TLSNAP01"
 *   bytes 8..11   header length H (uint32, big-endian)
 *   next H bytes  header, msgpack {format, tenant, seq, at, bodyBytes, sha256,
 *                 pad}; pad: spaces (older files have none)
 *
 * The header comes first in the file but needs the body's length and
 * hash, known only once the body is written, and its sequence number,
 * which an online restore learns only when it swaps the state in (after
 * the body is written: tenants/installState.ts); so a writer leaves room
 * for the header's largest encoding (the sequence number and the body's
 * length at msgpack's widest, 9 bytes), writes the body after it, and then
 * the header into that room, its `pad` string filling what narrower
 * numbers leave free. The room depends on the tenant and the time only,
 * so the body (whose arrays are aligned to the file's offsets) is the same
 * bytes whatever sequence number it is placed at. Every writer
 * pads the same way, so a snapshot encoded in memory is byte for byte the
 * file written. The checks of a body against its header (length, SHA-256)
 * are here too.
 */
import fs from 'node:fs'
import { assert } from '../assert.js'
import { decodePlain, encodePlain } from './codec.js'
import { type SnapshotHeader, SnapshotInvalidError } from './ports.js'

export const MAGIC = Buffer.from('TLSNAP01', 'ascii')
/** The format written (snapshotFile.ts); every earlier one still reads. */
export const SNAPSHOT_FORMAT = 6

/** Bytes of a slice's length prefix (format 3 on) and of the header's. */
export const LENGTH_BYTES = 4

export function uint32(value: number): Buffer {
  const bytes = Buffer.alloc(LENGTH_BYTES)
  bytes.writeUInt32BE(value)
  return bytes
}

/** The largest the header can encode to for this tenant and time: the sequence number and bodyBytes at their widest. */
export function reservedHeaderBytes(tenant: string, at: number): number {
  const widest: SnapshotHeader = { format: SNAPSHOT_FORMAT, tenant, seq: Number.MAX_SAFE_INTEGER, at, bodyBytes: Number.MAX_SAFE_INTEGER, sha256: '0'.repeat(64) }
  return encodePlain({ ...widest, pad: '' }).length
}

/** MAGIC, the header length, and `header` padded to exactly reservedHeaderBytes (see the top). */
export function headerPart(header: SnapshotHeader): Buffer {
  const reserved = reservedHeaderBytes(header.tenant, header.at)
  const free = reserved - encodePlain({ ...header, pad: '' }).length
  // A fixstr holds up to 31 bytes behind a one-byte prefix, so `free` spaces add exactly `free` bytes.
  assert(free >= 0 && free <= MAX_FIXSTR_BYTES, `header padding of ${free} bytes`)
  const padded = encodePlain({ ...header, pad: ' '.repeat(free) })
  assert(padded.length === reserved, 'the padded header fills its room exactly')
  return Buffer.concat([MAGIC, uint32(reserved), padded])
}

const MAX_FIXSTR_BYTES = 31

export function headerOf(tenant: string, seq: number, at: number, bodyBytes: number, sha256: string): SnapshotHeader {
  return { format: SNAPSHOT_FORMAT, tenant, seq, at, bodyBytes, sha256 }
}

/** The header and where the body starts; the body is not checked here. */
export function decodeHeader(bytes: Buffer): { header: SnapshotHeader; bodyOffset: number } {
  if (bytes.length < 12 || !bytes.subarray(0, 8).equals(MAGIC)) throw new SnapshotInvalidError('not a TimeLedger snapshot (bad magic)')
  const headerLength = bytes.readUInt32BE(8)
  if (12 + headerLength > bytes.length) throw new SnapshotInvalidError('truncated header')
  const header = decodePlain(bytes.subarray(12, 12 + headerLength)) as SnapshotHeader
  if (typeof header !== 'object' || header === null || typeof header.seq !== 'number') throw new SnapshotInvalidError('bad header')
  if (header.format > SNAPSHOT_FORMAT) throw new SnapshotInvalidError(`format ${header.format} is newer than this server reads`)
  return { header, bodyOffset: 12 + headerLength }
}

/** The tenant a snapshot file's header names, when `bytes` are (the start of) a snapshot file; else null. */
export function snapshotTenantOf(bytes: Buffer): string | null {
  if (!bytes.subarray(0, MAGIC.length).equals(MAGIC)) return null
  try {
    const { header } = decodeHeader(bytes)
    return typeof header.tenant === 'string' ? header.tenant : '(unnamed)'
  } catch {
    return '(unreadable header)'
  }
}

/** Only the header of a snapshot file (sequence number, time, size), without reading or checking the body. */
export function readSnapshotHeader(file: string): SnapshotHeader {
  const handle = fs.openSync(file, 'r')
  try {
    return headerOfFile(handle).header
  } finally {
    fs.closeSync(handle)
  }
}

export function checkBodyBytes(header: SnapshotHeader, bodyBytes: number): void {
  if (bodyBytes !== header.bodyBytes) throw new SnapshotInvalidError(`body is ${bodyBytes} bytes, header says ${header.bodyBytes}`)
}

export function checkSha256(header: SnapshotHeader, sha256: string): void {
  if (sha256 !== header.sha256) throw new SnapshotInvalidError('checksum mismatch')
}

/** Reads exactly `length` bytes at `position` of the file into `into`; a torn file when it ends first. */
export function readExactly(handle: number, into: Uint8Array, length: number, position: number): void {
  for (let done = 0; done < length; ) {
    const read = fs.readSync(handle, into, done, length - done, position + done)
    if (read === 0) throw new SnapshotInvalidError(`the file ends early, at byte ${position + done} (a torn file?)`)
    done += read
  }
}

/** The header of an open snapshot file and where its body starts, reading no more of the file than that. */
export function headerOfFile(handle: number): { header: SnapshotHeader; bodyOffset: number } {
  const start = Buffer.alloc(MAGIC.length + LENGTH_BYTES)
  readExactly(handle, start, start.length, 0)
  const headerEnd = start.length + start.readUInt32BE(MAGIC.length)
  const headerBytes = Buffer.alloc(Math.min(headerEnd, fs.fstatSync(handle).size))
  readExactly(handle, headerBytes, headerBytes.length, 0)
  return decodeHeader(headerBytes)
}
