/*
 * Tenant export files: one self-contained file that moves a tenant between
 * servers (`export`, `import`).
 *
 *   bytes 0..7    magic "TLEXPORT"
 *   bytes 8..11   header length H (uint32, big-endian)
 *   next H bytes  header, msgpack {format, tenant, createdAt, exportedAt,
 *                 seq, snapshotBytes, files: [{key, bytes}], sha256}
 *   the rest      payload: the tenant's state as a complete snapshot file
 *                 (snapshotFile.ts, with its own format, checksum and
 *                 reader), then the bytes of each uploaded file in the
 *                 header's order; sha256 covers the whole payload
 *
 * Every format ever written keeps its reader in READERS, chosen by the
 * header's `format`; a new format adds a reader and leaves the old ones, so
 * an old export still imports. A file from a newer program is refused with
 * a message saying so.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import { decodePlain, encodePlain } from './codec.js'
import type { SnapshotBody, SnapshotHeader } from './snapshotFile.js'
import { decodeSnapshot } from './snapshotReading.js'
import { snapshotTenantOf } from './snapshotHeader.js'

const MAGIC = Buffer.from('TLEXPORT', 'ascii')
const EXPORT_FORMAT = 1

export interface ExportedFile {
  /** The file's key beside the tenant in the LMDB files table. */
  key: string
  bytes: Buffer
}

export interface TenantExport {
  format: number
  tenant: string
  createdAt: number
  exportedAt: number
  snapshot: { header: SnapshotHeader; body: SnapshotBody }
  files: ExportedFile[]
}

interface HeaderV1 {
  format: 1
  tenant: string
  createdAt: number
  exportedAt: number
  seq: number
  snapshotBytes: number
  files: { key: string; bytes: number }[]
  sha256: string
}

export class ExportInvalidError extends Error {}

export function encodeExport(content: { tenant: string; createdAt: number; exportedAt: number; seq: number; snapshotBytes: Buffer; files: ExportedFile[] }): Buffer {
  const payload = [content.snapshotBytes, ...content.files.map((file) => file.bytes)]
  const hash = crypto.createHash('sha256')
  for (const part of payload) hash.update(part)
  const header: HeaderV1 = {
    format: EXPORT_FORMAT,
    tenant: content.tenant,
    createdAt: content.createdAt,
    exportedAt: content.exportedAt,
    seq: content.seq,
    snapshotBytes: content.snapshotBytes.length,
    files: content.files.map((file) => ({ key: file.key, bytes: file.bytes.length })),
    sha256: hash.digest('hex'),
  }
  const headerBytes = encodePlain(header)
  const length = Buffer.alloc(4)
  length.writeUInt32BE(headerBytes.length)
  return Buffer.concat([MAGIC, length, headerBytes, ...payload])
}

function readV1(raw: Record<string, unknown>, payload: Buffer): TenantExport {
  const header = raw as unknown as HeaderV1
  if (typeof header.snapshotBytes !== 'number' || !Array.isArray(header.files) || typeof header.sha256 !== 'string') throw new ExportInvalidError('bad format 1 header')
  const declared = header.snapshotBytes + header.files.reduce((sum, file) => sum + file.bytes, 0)
  if (payload.length !== declared) throw new ExportInvalidError(`the payload is ${payload.length} bytes, the header says ${declared} (a truncated file?)`)
  if (crypto.createHash('sha256').update(payload).digest('hex') !== header.sha256) throw new ExportInvalidError('checksum mismatch (the file is damaged)')
  const snapshot = decodeSnapshot(payload.subarray(0, header.snapshotBytes))
  let offset = header.snapshotBytes
  const files = header.files.map((file) => {
    const bytes = payload.subarray(offset, offset + file.bytes)
    offset += file.bytes
    return { key: file.key, bytes }
  })
  return { format: 1, tenant: header.tenant, createdAt: header.createdAt, exportedAt: header.exportedAt, snapshot, files }
}

/** One reader per format ever written. */
const READERS: Record<number, (header: Record<string, unknown>, payload: Buffer) => TenantExport> = {
  1: readV1,
}

/** The tenant an export file names in its header, or null when the file is not an export file (or unreadable). */
export function exportedTenantOf(file: string): string | null {
  let handle: number | undefined
  try {
    handle = fs.openSync(file, 'r')
    const start = Buffer.alloc(MAGIC.length + 4)
    if (fs.readSync(handle, start, 0, start.length, 0) < start.length || !start.subarray(0, MAGIC.length).equals(MAGIC)) return null
    const headerBytes = Buffer.alloc(Math.min(start.readUInt32BE(MAGIC.length), MAX_PEEKED_HEADER_BYTES))
    fs.readSync(handle, headerBytes, 0, headerBytes.length, start.length)
    const header = decodePlain(headerBytes) as { tenant?: unknown }
    return typeof header?.tenant === 'string' ? header.tenant : '(unnamed)'
  } catch {
    return null
  } finally {
    if (handle !== undefined) fs.closeSync(handle)
  }
}

/** An export header (a tenant name, a few numbers, one key and length per file) beyond this is not read to name it. */
const MAX_PEEKED_HEADER_BYTES = 1024 * 1024

export function decodeExport(bytes: Buffer): TenantExport {
  const snapshotTenant = snapshotTenantOf(bytes)
  if (snapshotTenant !== null) throw new ExportInvalidError(`a snapshot file (of tenant '${snapshotTenant}'), not an export file: 'restore <tenant> --from <file>' takes it`)
  if (bytes.length < 12 || !bytes.subarray(0, 8).equals(MAGIC)) throw new ExportInvalidError('not a TimeLedger export file (bad magic)')
  const headerLength = bytes.readUInt32BE(8)
  if (12 + headerLength > bytes.length) throw new ExportInvalidError('truncated header')
  const header = decodePlain(bytes.subarray(12, 12 + headerLength)) as Record<string, unknown>
  if (typeof header !== 'object' || header === null || typeof header.format !== 'number' || typeof header.tenant !== 'string') {
    throw new ExportInvalidError('bad header')
  }
  const reader = READERS[header.format]
  if (reader === undefined) {
    throw new ExportInvalidError(header.format > EXPORT_FORMAT ? `export format ${header.format} is newer than this program reads (up to ${EXPORT_FORMAT})` : `unknown export format ${header.format}`)
  }
  return reader(header, bytes.subarray(12 + headerLength))
}
