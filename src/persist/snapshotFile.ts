/*
 * Snapshot files: the whole state of one tenant at one log sequence number.
 *
 *   snapshots/<tenant>/<seq, 16 digits>.tlsnap
 *
 *   bytes 0..7    magic "TLSNAP01"
 *   bytes 8..11   header length H (uint32, big-endian)
 *   next H bytes  header, msgpack {format, tenant, seq, at, bodyBytes, sha256,
 *                 pad} (pad: spaces, see below; older files have none)
 *   the rest      body: a sequence of slices, each a uint32 (big-endian) byte
 *                 length and that many bytes of one msgpack value
 *                 {type, fields, strings, recs: Rec[]} holding at most
 *                 SLICE_RECORDS records, each distinct text of the `fields`
 *                 written once in `strings` (format 4; sliceStrings.ts);
 *                 then, from format 5 on, a slice {derived, part} per part
 *                 of each state derived from the records that the file
 *                 keeps so that a load need not rebuild it (the report
 *                 totals: reportTotals.ts; each read back and checked by
 *                 its owner). Format 4 files (no derived state), format 3
 *                 files (slices {type, recs} with their texts inline),
 *                 format 2 files (those without the lengths) and format 1
 *                 files (one value {collections: {type: Rec[]}}) still
 *                 read.
 *
 * A file is written to a temporary name, fsynced, renamed into place and the
 * folder fsynced, so a crash leaves either the old set of files or the new
 * one. On load the length and SHA-256 of the body are checked before what
 * was decoded is used: a torn or corrupt file is reported and skipped for
 * an older one, never half-loaded.
 *
 * A file of format 3 or later is read a slice at a time into one reused
 * buffer, hashed and decoded as it goes (`readSnapshotFile`): reading the whole
 * file into one buffer first held 267 MB for a million time records while
 * it was decoded (and after, until V8 collected it), and a file over 2 GiB
 * (about eight million records) could not be read at all
 * (fs.readFileSync's limit). The lengths let the reader take a slice
 * without decoding past it; a length that runs past the end of the file is
 * a torn file. The reader is written as steps (snapshotFileSteps, see
 * engine/steps.ts) that pause after each slice, so a server loading a large
 * tenant can go on serving the others between two slices.
 *
 * Encoding in slices lets a running server snapshot a large tenant without
 * stopping its event loop for seconds: the records are taken at one moment
 * (they are never changed in place, so the arrays stay that moment's state)
 * and encoded a slice per event-loop turn.
 *
 * The writer (`writeSnapshotInSlices`) holds one encoded slice at a time,
 * never the whole file (267 MB for a million time records, and a Buffer
 * cannot pass 4 GiB). The header comes first in the file but needs the
 * body's length and hash, known only at the end; so the writer leaves room
 * for the header's largest encoding (every number at msgpack's widest, 9
 * bytes), writes the body after it, and then the header into that room,
 * its `pad` string filling what narrower numbers leave free. Every writer
 * pads the same way, so a snapshot encoded in memory is byte for byte the
 * file written.
 *
 * Cluster mode keeps the same bytes in PostgreSQL rather than in a file
 * (persist/postgres/): it encodes them in memory (encodeSnapshotInSlices),
 * reads them back as steps from memory (snapshotBytesSteps), checks them
 * without decoding (snapshotBytesProblem), and prunes by the same rule
 * (pruneSnapshotSet, which pruneSnapshots applies to the files).
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { assert } from '../assert.js'
import { decodePlain, decodeSnapshotBody, decodeSnapshotSlice, decodeSnapshotValues, encodePlain, encodeSnapshotBody, releaseDecodedSource } from './codec.js'
import { isAlive } from './dataDirLock.js'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './privateFiles.js'
import { SnapshotFaults } from './snapshotFaults.js'
import { runNow, type Steps } from '../engine/steps.js'
import { TextPool } from '../engine/textPool.js'
import { type RecordSlices, type SnapshotBody, type SnapshotHeader, type SnapshotListing, type SnapshotSource, SnapshotInvalidError } from './ports.js'
import { resolveStringTable, SliceStringsError, withStringTable, type SliceOfRecords } from './sliceStrings.js'

const MAGIC = Buffer.from('TLSNAP01', 'ascii')
export const SNAPSHOT_FORMAT = 5
export const SLICE_RECORDS = 5000
const SUFFIX = '.tlsnap'

export type { SnapshotBody, SnapshotHeader, SnapshotListing, SnapshotSource }

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
function* storedSlices(body: SnapshotSource): IterableIterator<{ parts: [Buffer, Buffer]; records: number }> {
  for (const { value, records } of sliceValuesOf(body)) {
    const encoded = encodeSnapshotBody(value)
    yield { parts: [uint32(encoded.length), encoded], records }
  }
}

/** Bytes of a slice's length prefix (format 3 on) and of the header's. */
const LENGTH_BYTES = 4

function uint32(value: number): Buffer {
  const bytes = Buffer.alloc(LENGTH_BYTES)
  bytes.writeUInt32BE(value)
  return bytes
}

/** The largest the header can encode to for this tenant, sequence number and time: bodyBytes at its widest. */
function reservedHeaderBytes(tenant: string, seq: number, at: number): number {
  const widest: SnapshotHeader = { format: SNAPSHOT_FORMAT, tenant, seq, at, bodyBytes: Number.MAX_SAFE_INTEGER, sha256: '0'.repeat(64) }
  return encodePlain({ ...widest, pad: '' }).length
}

/** MAGIC, the header length, and `header` padded to exactly reservedHeaderBytes (see the top). */
function headerPart(header: SnapshotHeader): Buffer {
  const reserved = reservedHeaderBytes(header.tenant, header.seq, header.at)
  const free = reserved - encodePlain({ ...header, pad: '' }).length
  // A fixstr holds up to 31 bytes behind a one-byte prefix, so `free` spaces add exactly `free` bytes.
  assert(free >= 0 && free <= MAX_FIXSTR_BYTES, `header padding of ${free} bytes`)
  const padded = encodePlain({ ...header, pad: ' '.repeat(free) })
  assert(padded.length === reserved, 'the padded header fills its room exactly')
  return Buffer.concat([MAGIC, uint32(reserved), padded])
}

const MAX_FIXSTR_BYTES = 31

function headerOf(tenant: string, seq: number, at: number, bodyBytes: number, sha256: string): SnapshotHeader {
  return { format: SNAPSHOT_FORMAT, tenant, seq, at, bodyBytes, sha256 }
}

/** The file around a body of `body` parts (storedSlices). */
function frame(tenant: string, seq: number, at: number, body: Buffer[]): Buffer {
  const hash = crypto.createHash('sha256')
  let bodyBytes = 0
  for (const part of body) {
    hash.update(part)
    bodyBytes += part.length
  }
  return Buffer.concat([headerPart(headerOf(tenant, seq, at, bodyBytes, hash.digest('hex'))), ...body])
}

export function encodeSnapshot(tenant: string, seq: number, at: number, body: SnapshotSource): Buffer {
  return frame(tenant, seq, at, [...storedSlices(body)].flatMap((slice) => slice.parts))
}

/** The same bytes as encodeSnapshot, encoded one slice per event-loop turn; `onProgress` hears the records encoded so far. */
export async function encodeSnapshotInSlices(
  tenant: string,
  seq: number,
  at: number,
  body: SnapshotSource,
  onProgress?: (recordsDone: number) => void,
): Promise<Buffer> {
  const parts: Buffer[] = []
  let recordsDone = 0
  for (const slice of storedSlices(body)) {
    parts.push(...slice.parts)
    recordsDone += slice.records
    onProgress?.(recordsDone)
    await new Promise((resolve) => setImmediate(resolve))
  }
  return frame(tenant, seq, at, parts)
}

/**
 * Writes the same bytes as encodeSnapshot to the tenant's snapshot folder `dir`, atomically, a slice per write and
 * never more than one encoded slice in memory (see the top); `onProgress` hears the records written so far.
 */
export async function writeSnapshotInSlices(
  dir: string,
  tenant: string,
  seq: number,
  at: number,
  body: SnapshotSource,
  onProgress?: (recordsDone: number) => void,
): Promise<{ file: string; bytes: number }> {
  const bodyOffset = MAGIC.length + LENGTH_BYTES + reservedHeaderBytes(tenant, seq, at)
  let bodyBytes = 0
  const file = await writeAtomically(path.join(dir, snapshotFileName(seq)), async (handle) => {
    const hash = crypto.createHash('sha256')
    let recordsDone = 0
    for (const slice of storedSlices(body)) {
      for (const part of slice.parts) {
        hash.update(part)
        await writeFully(handle, part, bodyOffset + bodyBytes)
        bodyBytes += part.length
      }
      recordsDone += slice.records
      onProgress?.(recordsDone)
    }
    const header = headerPart(headerOf(tenant, seq, at, bodyBytes, hash.digest('hex')))
    assert(header.length === bodyOffset, 'the header fills the room left for it')
    await writeFully(handle, header, 0)
  })
  rememberSnapshotCheck(file, null)
  return { file, bytes: bodyOffset + bodyBytes }
}

/**
 * The slice values of a body of `format` put together (format 1's one value as a slice per collection), equal texts
 * shared across the file: from format 4 on through each slice's table, before that record by record.
 */
function* bodyOfSlices(values: unknown[], format: number): Steps<SnapshotBody> {
  const collections: Record<string, unknown[]> = {}
  const derived: Record<string, unknown[]> = {}
  const texts = new TextPool()
  for (const value of values) {
    const slice = value as { type?: unknown; recs?: unknown; derived?: unknown; part?: unknown }
    if (format >= 5 && typeof slice === 'object' && slice !== null && typeof slice.derived === 'string') {
      ;(derived[slice.derived] ??= []).push(slice.part)
      yield
      continue
    }
    if (typeof slice !== 'object' || slice === null || typeof slice.type !== 'string' || !Array.isArray(slice.recs)) {
      throw new SnapshotInvalidError('bad body slice')
    }
    const { type, recs } = format >= 4 ? withTextsBack(slice as SliceOfRecords, texts) : withTextsShared(slice as SliceOfRecords, texts)
    const collection = (collections[type] ??= [])
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

function checkBodyBytes(header: SnapshotHeader, bodyBytes: number): void {
  if (bodyBytes !== header.bodyBytes) throw new SnapshotInvalidError(`body is ${bodyBytes} bytes, header says ${header.bodyBytes}`)
}

function checkSha256(header: SnapshotHeader, sha256: string): void {
  if (sha256 !== header.sha256) throw new SnapshotInvalidError('checksum mismatch')
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
function* sliceValues(bodyBytes: number, bytesAt: (offset: number, length: number) => Buffer): Steps<unknown[]> {
  const values: unknown[] = []
  try {
    for (let offset = 0; offset < bodyBytes; ) {
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

function checkedBody(body: SnapshotBody): SnapshotBody {
  if (typeof body !== 'object' || body === null || typeof body.collections !== 'object') throw new SnapshotInvalidError('bad body')
  return body
}

/** A snapshot held in memory (an export file carries one). */
export function decodeSnapshot(bytes: Buffer): { header: SnapshotHeader; body: SnapshotBody } {
  return runNow(snapshotBytesSteps(bytes))
}

/** The header and the body of a snapshot held in memory, checked (length, SHA-256), its body not decoded. */
function checkedBytes(bytes: Buffer): { header: SnapshotHeader; bodyBytes: Buffer } {
  const { header, bodyOffset } = decodeHeader(bytes)
  const bodyBytes = bytes.subarray(bodyOffset)
  checkBodyBytes(header, bodyBytes.length)
  checkSha256(header, crypto.createHash('sha256').update(bodyBytes).digest('hex'))
  return { header, bodyBytes }
}

/** decodeSnapshot as steps (a pause after each slice), for a store that keeps snapshots as bytes (cluster mode). */
export function* snapshotBytesSteps(bytes: Buffer): Steps<{ header: SnapshotHeader; body: SnapshotBody }> {
  const { header, bodyBytes } = checkedBytes(bytes)
  if (header.format === 1) {
    const body = checkedBody(decodeSnapshotBody(bodyBytes) as SnapshotBody)
    return { header, body: yield* bodyOfSlices(Object.entries(body.collections).map(([type, recs]) => ({ type, recs })), 1) }
  }
  const values = header.format === 2 ? decodeSnapshotValues(bodyBytes) : yield* sliceValues(bodyBytes.length, (offset, length) => bodyBytes.subarray(offset, offset + length))
  return { header, body: checkedBody(yield* bodyOfSlices(values, header.format)) }
}

/** The header of a snapshot held in memory; the body is not checked. */
export function snapshotHeaderOf(bytes: Buffer): SnapshotHeader {
  return decodeHeader(bytes).header
}

/** Why the bytes cannot be the snapshot of `tenant` at `seq` (header, length, SHA-256 of the body), or null when they can. */
export function snapshotBytesProblem(bytes: Buffer, tenant: string, seq: number): string | null {
  try {
    const { header } = checkedBytes(bytes)
    if (header.tenant !== tenant || header.seq !== seq) return `the header names tenant '${header.tenant}' at seq ${header.seq}, not tenant '${tenant}' at seq ${seq}`
    return null
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/** Reads exactly `length` bytes at `position` of the file into `into`; a torn file when it ends first. */
function readExactly(handle: number, into: Buffer, length: number, position: number): void {
  for (let done = 0; done < length; ) {
    const read = fs.readSync(handle, into, done, length - done, position + done)
    if (read === 0) throw new SnapshotInvalidError(`the file ends early, at byte ${position + done} (a torn file?)`)
    done += read
  }
}

/** The header of an open snapshot file and where its body starts, reading no more of the file than that. */
function headerOfFile(handle: number): { header: SnapshotHeader; bodyOffset: number } {
  const start = Buffer.alloc(MAGIC.length + LENGTH_BYTES)
  readExactly(handle, start, start.length, 0)
  const headerEnd = start.length + start.readUInt32BE(MAGIC.length)
  const headerBytes = Buffer.alloc(Math.min(headerEnd, fs.fstatSync(handle).size))
  readExactly(handle, headerBytes, headerBytes.length, 0)
  return decodeHeader(headerBytes)
}

/** A snapshot file: from format 3 on a slice at a time (see the top), older formats read whole. */
export function readSnapshotFile(file: string): { header: SnapshotHeader; body: SnapshotBody } {
  return runNow(snapshotFileSteps(file))
}

/** readSnapshotFile as steps (steps.ts): a pause after each slice read and decoded, and after each slice put together. */
export function* snapshotFileSteps(file: string): Steps<{ header: SnapshotHeader; body: SnapshotBody }> {
  const handle = fs.openSync(file, 'r')
  try {
    const { header, bodyOffset } = headerOfFile(handle)
    if (header.format < 3) return decodeSnapshot(fs.readFileSync(file))
    checkBodyBytes(header, fs.fstatSync(handle).size - bodyOffset)
    // The body is read in order, each piece once, so hashing what is read hashes the body.
    const hash = crypto.createHash('sha256')
    let buffer = Buffer.allocUnsafe(0)
    const values = yield* sliceValues(header.bodyBytes, (offset, length) => {
      if (buffer.length < length) buffer = Buffer.allocUnsafe(length)
      const bytes = buffer.subarray(0, length)
      readExactly(handle, bytes, length, bodyOffset + offset)
      hash.update(bytes)
      return bytes
    })
    checkSha256(header, hash.digest('hex'))
    return { header, body: checkedBody(yield* bodyOfSlices(values, header.format)) }
  } finally {
    fs.closeSync(handle)
  }
}

/** Writes `bytes` to the file at `position` in full (a write may take fewer bytes than it was given). */
async function writeFully(handle: fs.promises.FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let done = 0; done < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done)
    done += bytesWritten
  }
}

/**
 * Writes a file atomically: `fill` writes a temporary file, which is fsynced and renamed into place before the
 * folder is fsynced; a crash leaves the old file or the new one. A failed `fill` leaves no temporary file. The file is
 * private (0600) from its creation on, and missing folders are made 0700 (privateFiles.ts).
 */
async function writeAtomically(finalPath: string, fill: (handle: fs.promises.FileHandle) => Promise<void>): Promise<string> {
  const dir = path.dirname(finalPath)
  await fs.promises.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  const temporaryPath = `${finalPath}.tmp-${process.pid}`
  try {
    const handle = await fs.promises.open(temporaryPath, 'w', PRIVATE_FILE_MODE)
    try {
      // A file left by an earlier write under the same name keeps its mode through open: set it.
      await handle.chmod(PRIVATE_FILE_MODE)
      await fill(handle)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await fs.promises.rename(temporaryPath, finalPath)
  } catch (error) {
    await fs.promises.rm(temporaryPath, { force: true })
    throw error
  }
  const dirHandle = await fs.promises.open(dir, 'r')
  try {
    await dirHandle.sync()
  } finally {
    await dirHandle.close()
  }
  return finalPath
}

export async function writeFileAtomically(finalPath: string, bytes: Buffer): Promise<string> {
  return writeAtomically(finalPath, (handle) => writeFully(handle, bytes, 0))
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
 * window's first points.
 *
 * Only snapshots that pass their checks count (snapshotFileProblem: header, length, checksum; each file checked
 * once): a corrupt file can restore nothing, so it takes no place among the newest `kept` and is not the base; a
 * good older one stays instead. A corrupt file met on the way is set aside as `<name>.corrupt` (no longer listed,
 * kept for the operator to look at) and reported to `faults`. Those that would go anyway are removed unchecked.
 *
 * Temporary files whose writer is gone (a process that stopped while writing a snapshot) go too: nothing will ever
 * rename them. Those of a running process (this server's writes under way, an operator command's) stay.
 */
export async function pruneSnapshots(
  dataDir: string,
  tenant: string,
  kept: number,
  windowStartMs: number,
  startsLogLine: (seq: number) => boolean,
  faults: SnapshotFaults = new SnapshotFaults(),
): Promise<number> {
  const snapshots = listSnapshots(dataDir, tenant).map((snapshot) => ({ ...snapshot, at: takenAt(snapshot.file) }))
  const logNeededAfter = await pruneSnapshotSet(snapshots, kept, windowStartMs, startsLogLine, {
    problemOf: (snapshot) => snapshotFileProblem(snapshot.file, tenant, snapshot.seq),
    remove: (snapshot) => fs.promises.rm(snapshot.file, { force: true }),
    setAside: async (snapshot, problem) => {
      faults.note(tenant, snapshot.file, problem, 'set aside')
      await fs.promises.rename(snapshot.file, `${snapshot.file}${CORRUPT_SUFFIX}`)
    },
  })
  for (const file of leftTemporaryFiles(tenantSnapshotDir(dataDir, tenant))) await fs.promises.rm(file, { force: true })
  return logNeededAfter
}

/** A listed snapshot with when it was taken (from its header), or why its header cannot be read. */
export type TimedSnapshot = SnapshotListing & { at: number | { problem: string } }

/**
 * pruneSnapshots' rule over a tenant's snapshots, newest first, whatever holds them (files; rows in cluster mode):
 * `problemOf` checks one in full (null: good), `remove` drops one no restore needs, `setAside` one that is corrupt.
 * Answers the sequence number up to which the log is needed by no restore (0: keep it all).
 */
export async function pruneSnapshotSet<S extends TimedSnapshot>(
  snapshots: readonly S[],
  kept: number,
  windowStartMs: number,
  startsLogLine: (seq: number) => boolean,
  actions: { problemOf(snapshot: S): Promise<string | null>; remove(snapshot: S): Promise<unknown>; setAside(snapshot: S, problem: string): Promise<unknown> },
): Promise<number> {
  const keep: { seq: number; at: number }[] = []
  let base: { seq: number; at: number } | undefined
  for (const snapshot of snapshots) {
    const at = snapshot.at
    const isBase = typeof at === 'number' && at <= windowStartMs && base === undefined
    const wanted = typeof at !== 'number' || keep.length < kept || isBase || (at > windowStartMs && startsLogLine(snapshot.seq))
    if (!wanted) {
      await actions.remove(snapshot)
      continue
    }
    const problem = typeof at === 'number' ? await actions.problemOf(snapshot) : at.problem
    if (problem !== null || typeof at !== 'number') {
      await actions.setAside(snapshot, problem ?? 'unreadable header')
      continue
    }
    const good = { seq: snapshot.seq, at }
    if (isBase) base = good
    keep.push(good)
  }
  const oldest = keep.at(-1)
  return oldest !== undefined && oldest.at <= windowStartMs ? oldest.seq : 0
}

/** What a corrupt snapshot file is renamed to by pruning (listSnapshots no longer lists it). */
export const CORRUPT_SUFFIX = '.corrupt'

/** The temporary files of snapshot writes (writeAtomically, named after the writer's pid) in `dir` whose writer is gone. */
function leftTemporaryFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return []
  return fs
    .readdirSync(dir)
    .filter((name) => {
      const writer = /^\d{16}\.tlsnap\.tmp-(\d+)$/.exec(name)?.[1]
      return writer !== undefined && !isAlive(Number(writer))
    })
    .map((name) => path.join(dir, name))
}

/** When the snapshot was taken, from its header; why not when the header cannot be read. */
function takenAt(file: string): number | { problem: string } {
  try {
    return readSnapshotHeader(file).at
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) }
  }
}

/**
 * What is known of snapshot files checked in full (by a load, by their writer, by snapshotFileProblem): the problem
 * found, or null. A file is never changed once in place, so its size and modification time name its content; a
 * file replaced under the same name is checked again.
 */
const checkedFiles = new Map<string, { stamp: string; problem: string | null }>()
/** Past this many files the memory starts over. */
const MAX_CHECKED_FILES = 10_000

function stampOf(file: string): string | null {
  const stats = fs.statSync(file, { throwIfNoEntry: false })
  return stats === undefined ? null : `${stats.size}:${stats.mtimeMs}`
}

/** Remembers what a full check of the file (its load, its writing) found: null when it is good. */
export function rememberSnapshotCheck(file: string, problem: string | null): void {
  const stamp = stampOf(file)
  if (stamp === null) return
  if (checkedFiles.size >= MAX_CHECKED_FILES) checkedFiles.clear()
  checkedFiles.set(file, { stamp, problem })
}

/** Bytes hashed per read when a file is checked. */
const CHECK_CHUNK_BYTES = 1024 * 1024

/**
 * Why the file cannot be the snapshot of `tenant` at `seq` (its header, the length and the SHA-256 of its body), or
 * null when it can. The body is hashed a chunk per read, reads being asynchronous, so a large file does not stop
 * the event loop; a file checked before (rememberSnapshotCheck) is not read again.
 */
export async function snapshotFileProblem(file: string, tenant: string, seq: number): Promise<string | null> {
  const known = checkedFiles.get(file)
  if (known !== undefined && known.stamp === stampOf(file)) return known.problem
  let problem: string | null = null
  try {
    const handle = await fs.promises.open(file, 'r')
    try {
      const { header, bodyOffset } = headerOfFile(handle.fd)
      if (header.tenant !== tenant || header.seq !== seq) throw new SnapshotInvalidError(`the header names tenant '${header.tenant}' at seq ${header.seq}, the file's place tenant '${tenant}' at seq ${seq}`)
      checkBodyBytes(header, (await handle.stat()).size - bodyOffset)
      const hash = crypto.createHash('sha256')
      const chunk = Buffer.allocUnsafe(CHECK_CHUNK_BYTES)
      for (let offset = 0; offset < header.bodyBytes; ) {
        const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, header.bodyBytes - offset), bodyOffset + offset)
        if (bytesRead === 0) throw new SnapshotInvalidError(`the file ends early, at byte ${bodyOffset + offset} (a torn file?)`)
        hash.update(chunk.subarray(0, bytesRead))
        offset += bytesRead
      }
      checkSha256(header, hash.digest('hex'))
    } finally {
      await handle.close()
    }
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error)
  }
  rememberSnapshotCheck(file, problem)
  return problem
}
