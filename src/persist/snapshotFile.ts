/*
 * Snapshot files: the whole state of one tenant at one log sequence number.
 *
 *   snapshots/<tenant>/<seq, 16 digits>.tlsnap
 *
 * A file is the header (snapshotHeader.ts: magic, length, msgpack {format,
 * tenant, seq, at, bodyBytes, sha256, pad}) and the body. Format 6 (written
 * now: snapshotFormat6.ts) stores the large collections as their columns,
 * raw typed-array bytes behind a msgpack frame, and the small ones and the
 * derived state as slices; formats 1 to 5 (snapshotSlices.ts) store every
 * record in msgpack slices, and still read.
 *
 * A file is written to a temporary name, fsynced, renamed into place and the
 * folder fsynced, so a crash leaves either the old set of files or the new
 * one. On load the length and SHA-256 of the body are checked before what
 * was read is used: a torn or corrupt file is reported and skipped for an
 * older one, never half-loaded.
 *
 * The readers are snapshotReading.ts.
 *
 * The writer holds no more than a turn's worth of parts: the columns of a
 * frozen table (engine/columnTable.ts: taken at one moment, a chunk a
 * later write changes is copied first, so the arrays stay that moment's)
 * are written as they lie, a few megabytes per event-loop turn, the
 * records of the small collections a slice per turn.
 *
 * Cluster mode keeps the same bytes in PostgreSQL rather than in a file
 * (persist/postgres/): it stores them as they are made, in parts
 * (snapshotInParts: the body hashed as it goes, the header's room filled
 * last), reads them back as steps from the parts it holds
 * (postgres/heldSnapshot.ts; snapshotBytesSteps for formats before 6), and
 * prunes by the same rule (snapshotPruning.ts).
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { assert } from '../assert.js'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './privateFiles.js'
import type { SnapshotBody, SnapshotHeader, SnapshotListing, SnapshotSource, UnplacedSnapshot } from './ports.js'
import { rememberSnapshotCheck } from './snapshotChecks.js'
import { format6Parts } from './snapshotFormat6.js'
import { headerOf, headerPart, LENGTH_BYTES, MAGIC, reservedHeaderBytes } from './snapshotHeader.js'

const SUFFIX = '.tlsnap'
/** Between a temporary file's name and its writer's pid (snapshotPruning.ts removes those whose writer is gone). */
const TEMPORARY_MARK = '.tmp-'

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

/** Where the body starts in a snapshot of the tenant taken at `at` (after the header's room, the same at any sequence number). */
function bodyOffsetOf(tenant: string, at: number): number {
  return MAGIC.length + LENGTH_BYTES + reservedHeaderBytes(tenant, at)
}

/** The body's parts, a turn's worth at a time, with the records each completes (snapshotFormat6.ts). */
function bodyParts(tenant: string, at: number, body: SnapshotSource): IterableIterator<{ parts: Uint8Array[]; records: number }> {
  return format6Parts(body, bodyOffsetOf(tenant, at))
}

/** The file around a body of `body` parts, hashed and put together at once (the arrays' bytes as they are now). */
function frame(tenant: string, seq: number, at: number, body: Uint8Array[]): Buffer {
  const hash = crypto.createHash('sha256')
  let bodyBytes = 0
  for (const part of body) {
    hash.update(part)
    bodyBytes += part.length
  }
  return Buffer.concat([headerPart(headerOf(tenant, seq, at, bodyBytes, hash.digest('hex'))), ...body])
}

export function encodeSnapshot(tenant: string, seq: number, at: number, body: SnapshotSource): Buffer {
  return frame(
    tenant,
    seq,
    at,
    [...bodyParts(tenant, at, body)].flatMap((slice) => slice.parts),
  )
}

/**
 * Copies a turn's parts into one buffer kept for every turn and answers the view of them, valid until the next copy: a
 * new buffer per turn (a hundred megabytes for a million records) made V8 collect its whole heap every few turns for
 * the memory outside it, holding the event loop up to 50 ms at a time.
 */
function turnCopier(): (parts: readonly Uint8Array[]) => Buffer {
  let buffer = Buffer.allocUnsafe(0)
  return (parts) => {
    const length = parts.reduce((sum, part) => sum + part.length, 0)
    if (buffer.length < length) buffer = Buffer.allocUnsafe(length)
    let filled = 0
    for (const part of parts) {
      buffer.set(part, filled)
      filled += part.length
    }
    return buffer.subarray(0, length)
  }
}

/** Body bytes copied into the one buffer of encodeSnapshotInSlices per event-loop turn. */
const JOIN_STEP_BYTES = 8 * 1024 * 1024

/**
 * The same bytes as encodeSnapshot, encoded a turn's worth per event-loop turn (snapshotInParts) and put together a few
 * megabytes per turn; `onProgress` hears the records encoded so far.
 */
export async function encodeSnapshotInSlices(tenant: string, seq: number, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<Buffer> {
  const parts: Buffer[] = []
  const encoding = snapshotInParts(tenant, at, body, JOIN_STEP_BYTES, onProgress)
  let next = await encoding.next()
  for (; next.done !== true; next = await encoding.next()) parts.push(Buffer.from(next.value))
  const { bodyBytes, sha256 } = next.value
  const bytes = Buffer.allocUnsafe(parts.reduce((sum, part) => sum + part.length, 0))
  let filled = 0
  for (const part of parts) {
    bytes.set(part, filled)
    filled += part.length
    await new Promise((resolve) => setImmediate(resolve))
  }
  headerPart(headerOf(tenant, seq, at, bodyBytes, sha256)).copy(bytes, 0)
  return bytes
}

/** What snapshotInParts answers once every part is out: what the header names of the body. */
export interface EncodedSnapshot {
  bodyBytes: number
  sha256: string
}

/**
 * The bytes of encodeSnapshot, made a turn's worth per event-loop turn (each turn's parts copied at once into one
 * buffer kept for every turn, and hashed: what is hashed is what is handed out) and handed out in parts of
 * `partBytes` (the last shorter) as they fill. The first part starts with the header's room, zeroed: the header needs
 * the body's length and hash, answered at the end, and the room is the same at any sequence number (snapshotHeader.ts),
 * so the writer puts `headerPart(headerOf(…))` there last. A part handed out is a view of a buffer the next one reuses:
 * the consumer is done with it before it asks for the next. `onProgress` hears the records encoded so far.
 */
export async function* snapshotInParts(
  tenant: string,
  at: number,
  body: SnapshotSource,
  partBytes: number,
  onProgress?: (recordsDone: number) => void,
): AsyncGenerator<Uint8Array, EncodedSnapshot, undefined> {
  const bodyOffset = bodyOffsetOf(tenant, at)
  assert(partBytes > bodyOffset, 'the first part holds the header')
  const part = Buffer.alloc(partBytes)
  let filled = bodyOffset
  const hash = crypto.createHash('sha256')
  let bodyBytes = 0
  let recordsDone = 0
  const copyTurn = turnCopier()
  for (const slice of bodyParts(tenant, at, body)) {
    // A copy in this turn: the last chunk of a frozen column may take rows appended after the moment it keeps.
    const bytes = copyTurn(slice.parts)
    const length = bytes.length
    hash.update(bytes)
    bodyBytes += length
    for (let taken = 0; taken < length; ) {
      const step = Math.min(length - taken, partBytes - filled)
      part.set(bytes.subarray(taken, taken + step), filled)
      filled += step
      taken += step
      if (filled === partBytes) {
        yield part
        filled = 0
      }
    }
    recordsDone += slice.records
    onProgress?.(recordsDone)
    await new Promise((resolve) => setImmediate(resolve))
  }
  if (filled > 0) yield part.subarray(0, filled)
  return { bodyBytes, sha256: hash.digest('hex') }
}

/**
 * Writes the same bytes as encodeSnapshot to the tenant's snapshot folder `dir`, atomically, a turn's worth of parts
 * per write (see the top); `onProgress` hears the records written so far. It is writeUnplacedSnapshot, placed at once.
 */
export async function writeSnapshotInSlices(
  dir: string,
  tenant: string,
  seq: number,
  at: number,
  body: SnapshotSource,
  onProgress?: (recordsDone: number) => void,
): Promise<{ file: string; bytes: number }> {
  const unplaced = await writeUnplacedSnapshot(dir, tenant, at, body, onProgress)
  return unplaced.place(seq)
}

/** Numbers the unplaced snapshots of this process, so that two written at once in one folder have two names. */
let unplacedWritten = 0

/**
 * The body of a snapshot written (a turn's worth of parts per write) and fsynced to a temporary file in the tenant's
 * snapshot folder `dir`, under a name the listing does not take; `place(seq)` then writes the header into the room
 * left for it, fsyncs the file again (one page), renames it to the snapshot of `seq` and fsyncs the folder: a crash
 * before the rename leaves the tenant's snapshots as they were, after it the new one whole. The file is private
 * (0600) from its creation on, and missing folders are made 0700 (privateFiles.ts). A file left by a process that
 * stopped meanwhile is removed by the tenant's next pruning (snapshotPruning.ts).
 */
export async function writeUnplacedSnapshot(dir: string, tenant: string, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<UnplacedSnapshot> {
  await fs.promises.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  unplacedWritten += 1
  const temporaryPath = path.join(dir, `unplaced-${unplacedWritten}${SUFFIX}${TEMPORARY_MARK}${process.pid}`)
  const bodyOffset = bodyOffsetOf(tenant, at)
  const handle = await fs.promises.open(temporaryPath, 'w', PRIVATE_FILE_MODE)
  let open = true
  const giveUp = async () => {
    if (open) await handle.close().catch(() => undefined)
    open = false
    await fs.promises.rm(temporaryPath, { force: true })
  }
  let bodyBytes = 0
  const hash = crypto.createHash('sha256')
  try {
    // A file left by an earlier write under the same name keeps its mode through open: set it.
    await handle.chmod(PRIVATE_FILE_MODE)
    let recordsDone = 0
    const copyTurn = turnCopier()
    for (const slice of bodyParts(tenant, at, body)) {
      // One copy of the turn's parts, hashed and written: what is hashed is what the file holds.
      const bytes = copyTurn(slice.parts)
      hash.update(bytes)
      await writeFully(handle, bytes, bodyOffset + bodyBytes)
      bodyBytes += bytes.length
      recordsDone += slice.records
      onProgress?.(recordsDone)
    }
    await handle.sync()
  } catch (error) {
    await giveUp()
    throw error
  }
  const sha256 = hash.digest('hex')
  let settled = false
  return {
    place: async (seq) => {
      assert(!settled, 'an unplaced snapshot is placed or discarded once')
      settled = true
      const finalPath = path.join(dir, snapshotFileName(seq))
      try {
        const header = headerPart(headerOf(tenant, seq, at, bodyBytes, sha256))
        assert(header.length === bodyOffset, 'the header fills the room left for it')
        await writeFully(handle, header, 0)
        await handle.sync()
        open = false
        await handle.close()
        await fs.promises.rename(temporaryPath, finalPath)
      } catch (error) {
        await giveUp()
        throw error
      }
      await syncFolder(dir)
      rememberSnapshotCheck(finalPath, null)
      return { file: finalPath, bytes: bodyOffset + bodyBytes }
    },
    discard: async () => {
      if (settled) return
      settled = true
      await giveUp()
    },
  }
}

/** Makes a rename in `dir` durable. */
async function syncFolder(dir: string): Promise<void> {
  const dirHandle = await fs.promises.open(dir, 'r')
  try {
    await dirHandle.sync()
  } finally {
    await dirHandle.close()
  }
}

/** Writes `bytes` to the file at `position` in full (a write may take fewer bytes than it was given). */
async function writeFully(handle: fs.promises.FileHandle, bytes: Uint8Array, position: number): Promise<void> {
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
  const temporaryPath = `${finalPath}${TEMPORARY_MARK}${process.pid}`
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
  await syncFolder(dir)
  return finalPath
}

export async function writeFileAtomically(finalPath: string, bytes: Buffer): Promise<string> {
  return writeAtomically(finalPath, (handle) => writeFully(handle, bytes, 0))
}
