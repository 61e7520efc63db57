/*
 * Snapshot files: the whole state of one tenant at one log sequence number.
 *
 *   snapshots/<tenant>/<seq, 16 digits>.tlsnap
 *
 *   bytes 0..7    magic "TLSNAP01"
 *   bytes 8..11   header length H (uint32, big-endian)
 *   next H bytes  header, msgpack {format, tenant, seq, at, bodyBytes, sha256}
 *   the rest      body: a sequence of msgpack values {type, recs: Rec[]}, each
 *                 slice holding at most SLICE_RECORDS records (format 2); format
 *                 1 files hold one value {collections: {type: Rec[]}} and
 *                 still read
 *
 * A file is written to a temporary name, fsynced, renamed into place and the
 * folder fsynced, so a crash leaves either the old set of files or the new
 * one. On load the length and SHA-256 of the body are checked before it is
 * decoded: a torn or corrupt file is reported and skipped for an older one,
 * never half-loaded.
 *
 * Encoding in slices lets a running server snapshot a large tenant without
 * stopping its event loop for seconds: the records are taken at one moment
 * (they are never changed in place, so the arrays stay that moment's state)
 * and encoded a slice per event-loop turn.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { decodePlain, decodeSnapshotBody, decodeSnapshotValues, encodePlain, encodeSnapshotBody } from './codec.js'

const MAGIC = Buffer.from('TLSNAP01', 'ascii')
export const SNAPSHOT_FORMAT = 2
export const SLICE_RECORDS = 5000
const SUFFIX = '.tlsnap'

export interface SnapshotHeader {
  format: number
  tenant: string
  seq: number
  at: number
  bodyBytes: number
  sha256: string
}

export interface SnapshotBody {
  collections: Record<string, unknown[]>
}

export interface SnapshotListing {
  seq: number
  file: string
  bytes: number
}

export function tenantSnapshotDir(dataDir: string, tenant: string): string {
  return path.join(dataDir, 'snapshots', tenant)
}

export function snapshotFileName(seq: number): string {
  return `${String(seq).padStart(16, '0')}${SUFFIX}`
}

/** The tenant's snapshot files, newest first. */
export function listSnapshots(dataDir: string, tenant: string): SnapshotListing[] {
  const dir = tenantSnapshotDir(dataDir, tenant)
  if (!fs.existsSync(dir)) return []
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith(SUFFIX) && /^\d{16}\.tlsnap$/.test(name))
    .map((name) => {
      const file = path.join(dir, name)
      return { seq: Number(name.slice(0, 16)), file, bytes: fs.statSync(file).size }
    })
    .sort((a, b) => b.seq - a.seq)
}

function* slicesOf(body: SnapshotBody): IterableIterator<{ type: string; recs: unknown[] }> {
  for (const [type, recs] of Object.entries(body.collections)) {
    for (let start = 0; start < recs.length; start += SLICE_RECORDS) yield { type, recs: recs.slice(start, start + SLICE_RECORDS) }
  }
}

function frame(tenant: string, seq: number, at: number, slices: Buffer[]): Buffer {
  const hash = crypto.createHash('sha256')
  let bodyBytes = 0
  for (const slice of slices) {
    hash.update(slice)
    bodyBytes += slice.length
  }
  const header: SnapshotHeader = { format: SNAPSHOT_FORMAT, tenant, seq, at, bodyBytes, sha256: hash.digest('hex') }
  const headerBytes = encodePlain(header)
  const length = Buffer.alloc(4)
  length.writeUInt32BE(headerBytes.length)
  return Buffer.concat([MAGIC, length, headerBytes, ...slices])
}

export function encodeSnapshot(tenant: string, seq: number, at: number, body: SnapshotBody): Buffer {
  return frame(tenant, seq, at, [...slicesOf(body)].map((slice) => encodeSnapshotBody(slice)))
}

/** The same bytes as encodeSnapshot, encoded one slice per event-loop turn; `onProgress` hears the records encoded so far. */
export async function encodeSnapshotInSlices(
  tenant: string,
  seq: number,
  at: number,
  body: SnapshotBody,
  onProgress?: (recordsDone: number) => void,
): Promise<Buffer> {
  const slices: Buffer[] = []
  let recordsDone = 0
  for (const slice of slicesOf(body)) {
    slices.push(encodeSnapshotBody(slice))
    recordsDone += slice.recs.length
    onProgress?.(recordsDone)
    await new Promise((resolve) => setImmediate(resolve))
  }
  return frame(tenant, seq, at, slices)
}

function bodyOfSlices(values: unknown[]): SnapshotBody {
  const collections: Record<string, unknown[]> = {}
  for (const value of values) {
    const slice = value as { type?: unknown; recs?: unknown }
    if (typeof slice !== 'object' || slice === null || typeof slice.type !== 'string' || !Array.isArray(slice.recs)) {
      throw new SnapshotInvalidError('bad body slice')
    }
    const recs = (collections[slice.type] ??= [])
    for (const rec of slice.recs) recs.push(rec)
  }
  return { collections }
}

export class SnapshotInvalidError extends Error {}

/** The header and where the body starts; the body is not checked here. */
function decodeHeader(bytes: Buffer): { header: SnapshotHeader; bodyOffset: number } {
  if (bytes.length < 12 || !bytes.subarray(0, 8).equals(MAGIC)) throw new SnapshotInvalidError('not a TimeLedger snapshot (bad magic)')
  const headerLength = bytes.readUInt32BE(8)
  if (12 + headerLength > bytes.length) throw new SnapshotInvalidError('truncated header')
  const header = decodePlain(bytes.subarray(12, 12 + headerLength)) as SnapshotHeader
  if (typeof header !== 'object' || header === null || typeof header.seq !== 'number') throw new SnapshotInvalidError('bad header')
  if (header.format > SNAPSHOT_FORMAT) throw new SnapshotInvalidError(`format ${header.format} is newer than this server reads`)
  return { header, bodyOffset: 12 + headerLength }
}

const HEADER_READ_BYTES = 4096

/** Only the header of a snapshot file (sequence number, time, size), without reading or checking the body. */
export function readSnapshotHeader(file: string): SnapshotHeader {
  const handle = fs.openSync(file, 'r')
  try {
    const start = Buffer.alloc(HEADER_READ_BYTES)
    const length = fs.readSync(handle, start, 0, HEADER_READ_BYTES, 0)
    return decodeHeader(start.subarray(0, length)).header
  } finally {
    fs.closeSync(handle)
  }
}

export function decodeSnapshot(bytes: Buffer): { header: SnapshotHeader; body: SnapshotBody } {
  const { header, bodyOffset } = decodeHeader(bytes)
  const bodyBytes = bytes.subarray(bodyOffset)
  if (bodyBytes.length !== header.bodyBytes) throw new SnapshotInvalidError(`body is ${bodyBytes.length} bytes, header says ${header.bodyBytes}`)
  const sha256 = crypto.createHash('sha256').update(bodyBytes).digest('hex')
  if (sha256 !== header.sha256) throw new SnapshotInvalidError('checksum mismatch')
  const body = header.format === 1 ? (decodeSnapshotBody(bodyBytes) as SnapshotBody) : bodyOfSlices(decodeSnapshotValues(bodyBytes))
  if (typeof body !== 'object' || body === null || typeof body.collections !== 'object') throw new SnapshotInvalidError('bad body')
  return { header, body }
}

export function readSnapshotFile(file: string): { header: SnapshotHeader; body: SnapshotBody } {
  return decodeSnapshot(fs.readFileSync(file))
}

export async function writeSnapshotFile(dir: string, seq: number, bytes: Buffer): Promise<string> {
  return writeFileAtomically(path.join(dir, snapshotFileName(seq)), bytes)
}

/** Writes atomically: temporary file, fsync, rename, fsync of the folder; a crash leaves the old file or the new one. */
export async function writeFileAtomically(finalPath: string, bytes: Buffer): Promise<string> {
  const dir = path.dirname(finalPath)
  await fs.promises.mkdir(dir, { recursive: true })
  const temporaryPath = `${finalPath}.tmp-${process.pid}`
  const handle = await fs.promises.open(temporaryPath, 'w')
  try {
    await handle.writeFile(bytes)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await fs.promises.rename(temporaryPath, finalPath)
  const dirHandle = await fs.promises.open(dir, 'r')
  try {
    await dirHandle.sync()
  } finally {
    await dirHandle.close()
  }
  return finalPath
}

/**
 * Removes the snapshots no restore can need any more, and returns the sequence number up to which the log is
 * needed by no restore either (0: keep it all).
 *
 * Kept: the newest `kept`; the newest one taken at or before `windowStartMs` (the start of the point-in-time window,
 * LOG_RETENTION_MS ago), the base from which the log reaches every point of the window; and each snapshot of the
 * window that starts a log line (`startsLogLine`: a restore or import wrote it, no log entry has its sequence
 * number, so the entries after it can be reached from it alone). The log up to the oldest kept snapshot can go
 * only when that snapshot predates the window: otherwise the log from its first entry may be the only way to the
 * window's first points. A snapshot whose header cannot be read is kept only as one of the newest `kept`.
 */
export async function pruneSnapshots(
  dataDir: string,
  tenant: string,
  kept: number,
  windowStartMs: number,
  startsLogLine: (seq: number) => boolean,
): Promise<number> {
  const listing = listSnapshots(dataDir, tenant).map((snapshot) => ({ ...snapshot, at: takenAt(snapshot.file) }))
  const base = listing.find((snapshot) => snapshot.at !== null && snapshot.at <= windowStartMs)
  const keep = listing.filter(
    (snapshot, index) =>
      index < kept || snapshot === base || (snapshot.at !== null && snapshot.at > windowStartMs && startsLogLine(snapshot.seq)),
  )
  for (const old of listing) if (!keep.includes(old)) await fs.promises.rm(old.file, { force: true })
  const oldest = keep.at(-1)
  return oldest !== undefined && oldest.at !== null && oldest.at <= windowStartMs ? oldest.seq : 0
}

function takenAt(file: string): number | null {
  try {
    return readSnapshotHeader(file).at
  } catch {
    return null
  }
}
