/*
 * Reading a snapshot (snapshotFile.ts has the layout and the writers): from
 * a file a piece at a time (a slice, a column's chunk), hashed as it goes,
 * never whole into one buffer (267 MB for a million time records in format
 * 5, and fs.readFileSync stops at 2 GiB), or from bytes held in memory (an
 * export file; cluster mode's snapshots of formats before 6). The readers
 * are written as steps (engine/steps.ts) that pause every few hundred
 * kilobytes, so a server loading a large tenant goes on serving the others
 * meanwhile. The length and SHA-256 of the body are checked before what was
 * read is used: a torn or corrupt snapshot is refused, never half-loaded.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import { assertionFailed } from '../assert.js'
import { runNow, type Steps } from '../engine/steps.js'
import { decodeSnapshotBody, decodeSnapshotValues } from './codec.js'
import { type SnapshotBody, type SnapshotHeader, SnapshotInvalidError } from './ports.js'
import { format6BodySteps, type BodyReader } from './snapshotFormat6.js'
import { checkBodyBytes, checkSha256, decodeHeader, headerOfFile, readExactly } from './snapshotHeader.js'
import { bodyOfSlices, checkedBody, sliceValues } from './snapshotSlices.js'

/** A snapshot held in memory (an export file carries one). */
export function decodeSnapshot(bytes: Buffer): { header: SnapshotHeader; body: SnapshotBody } {
  return runNow(snapshotBytesSteps(bytes))
}

/** The header and the body of a snapshot held in memory, checked (length, SHA-256), its body not decoded. */
function checkedBytes(bytes: Buffer): { header: SnapshotHeader; bodyOffset: number; bodyBytes: Buffer } {
  const { header, bodyOffset } = decodeHeader(bytes)
  const bodyBytes = bytes.subarray(bodyOffset)
  checkBodyBytes(header, bodyBytes.length)
  checkSha256(header, crypto.createHash('sha256').update(bodyBytes).digest('hex'))
  return { header, bodyOffset, bodyBytes }
}

/** The bytes of a body in memory as a format 6 reader takes them (checkedBytes checked the length). */
function memoryReader(bodyBytes: Buffer): BodyReader {
  return (into, offset) => {
    if (offset + into.length > bodyBytes.length) throw new SnapshotInvalidError(`the body ends early, at byte ${bodyBytes.length} (a torn snapshot?)`)
    into.set(bodyBytes.subarray(offset, offset + into.length))
  }
}

/** decodeSnapshot as steps (a pause after each slice), for a store that keeps snapshots as bytes (cluster mode). */
export function* snapshotBytesSteps(bytes: Buffer): Steps<{ header: SnapshotHeader; body: SnapshotBody }> {
  const { header, bodyOffset, bodyBytes } = checkedBytes(bytes)
  if (header.format >= 6) return { header, body: yield* format6BodySteps(bodyBytes.length, bodyOffset, memoryReader(bodyBytes)) }
  if (header.format === 1) {
    const body = checkedBody(decodeSnapshotBody(bodyBytes) as SnapshotBody)
    return {
      header,
      body: yield* bodyOfSlices(
        Object.entries(body.collections).map(([type, recs]) => ({ type, recs })),
        1,
      ),
    }
  }
  const values = header.format === 2 ? decodeSnapshotValues(bodyBytes) : yield* sliceValues(bodyBytes.length, 0, (offset, length) => bodyBytes.subarray(offset, offset + length))
  return { header, body: checkedBody(yield* bodyOfSlices(values, header.format)) }
}

/** A snapshot file: from format 3 on a piece at a time (see the top), older formats read whole. */
export function readSnapshotFile(file: string): { header: SnapshotHeader; body: SnapshotBody } {
  return runNow(snapshotFileSteps(file))
}

/** readSnapshotFile as steps (steps.ts): a pause after each slice read and decoded, every few megabytes of columns, and after each slice put together. */
export function* snapshotFileSteps(file: string): Steps<{ header: SnapshotHeader; body: SnapshotBody }> {
  const handle = fs.openSync(file, 'r')
  try {
    const { header, bodyOffset } = headerOfFile(handle)
    if (header.format < 3) return decodeSnapshot(fs.readFileSync(file))
    checkBodyBytes(header, fs.fstatSync(handle).size - bodyOffset)
    // The body is read in order, each piece once, so hashing what is read hashes the body.
    const hash = crypto.createHash('sha256')
    const read = bufferedReader(handle, bodyOffset, header.bodyBytes, (bytes) => hash.update(bytes))
    if (header.format >= 6) {
      const body = yield* format6BodySteps(header.bodyBytes, bodyOffset, read)
      checkSha256(header, hash.digest('hex'))
      return { header, body }
    }
    let buffer = Buffer.allocUnsafe(0)
    const values = yield* sliceValues(header.bodyBytes, 0, (offset, length) => {
      if (buffer.length < length) buffer = Buffer.allocUnsafe(length)
      const bytes = buffer.subarray(0, length)
      read(bytes, offset)
      return bytes
    })
    checkSha256(header, hash.digest('hex'))
    return { header, body: checkedBody(yield* bodyOfSlices(values, header.format)) }
  } finally {
    fs.closeSync(handle)
  }
}

/** Bytes of the file read at once by bufferedReader for the small pieces asked for (a length, a slice of records). */
const READ_AHEAD_BYTES = 1024 * 1024
/** The smallest piece bufferedReader reads where it goes rather than through its read-ahead. */
const DIRECT_READ_MIN_BYTES = 64 * 1024

/**
 * A BodyReader of the body of `bodyBytes` at `bodyOffset` of the open file: the small pieces asked for (in order,
 * each byte once) are copied out of READ_AHEAD_BYTES read at a time, rather than a read of the file each (thousands
 * for a million time records' slices), and a piece of DIRECT_READ_MIN_BYTES or more is read where it goes; `onRead` hears each
 * read first (to hash it). The body's end is read no further.
 */
function bufferedReader(handle: number, bodyOffset: number, bodyBytes: number, onRead: (bytes: Uint8Array) => void): BodyReader {
  const ahead = Buffer.allocUnsafe(READ_AHEAD_BYTES)
  let aheadFrom = 0
  let aheadBytes = 0
  return (into, offset) => {
    for (let done = 0; done < into.length; ) {
      const at = offset + done
      if (at >= aheadFrom + aheadBytes) {
        if (at !== aheadFrom + aheadBytes) assertionFailed(`snapshot body read out of order: byte ${at} after ${aheadFrom + aheadBytes}`)
        if (into.length - done >= DIRECT_READ_MIN_BYTES) {
          // A large piece (a step's worth of a format 6 body's arrays) is read where it goes.
          const rest = into.subarray(done)
          if (at + rest.length > bodyBytes) throw new SnapshotInvalidError(`the body ends early, at byte ${bodyBytes} (a torn snapshot?)`)
          readExactly(handle, rest, rest.length, bodyOffset + at)
          onRead(rest)
          aheadFrom = at + rest.length
          aheadBytes = 0
          return
        }
        aheadFrom = at
        aheadBytes = Math.min(READ_AHEAD_BYTES, bodyBytes - at)
        if (aheadBytes <= 0) throw new SnapshotInvalidError(`the body ends early, at byte ${bodyBytes} (a torn snapshot?)`)
        readExactly(handle, ahead, aheadBytes, bodyOffset + at)
        onRead(ahead.subarray(0, aheadBytes))
      }
      const piece = Math.min(into.length - done, aheadFrom + aheadBytes - at)
      into.set(ahead.subarray(at - aheadFrom, at - aheadFrom + piece), done)
      done += piece
    }
  }
}
