/*
 * A snapshot's bytes stored in PostgreSQL as they are made, without a
 * stall: the parts of snapshotInParts (snapshotFile.ts: a turn's worth of
 * the body per event-loop turn, hashed as it goes, cut into parts of
 * PART_BYTES) go out one by one as rows of a binary COPY FROM STDIN
 * (binaryCopy.ts: the bytes as they are, where a query's parameter would
 * carry them as hex text), each sent before the next is made. Nothing holds
 * the whole snapshot, in the node or on the wire.
 *
 * They go to an unplaced snapshot (pgSnapshots.ts: a negative seq, which
 * no listing takes), in one transaction of their own: a `snapshots` row
 * first (its parts' key refers to it; its length and hash, known at the
 * end, are written at the end), then the COPY, then the row completed. The
 * transaction takes no lease lock: it lasts as long as the encoding does
 * (seconds for a million records), and a lock held that long would hold
 * back the node's lease renewals. Placing the snapshot at its sequence
 * number (the only step that makes it visible) is the short transaction
 * fenced by the lease; a node that lost the lease meanwhile leaves
 * unplaced rows, which the tenant's next pruning removes.
 *
 * The first part's header room is zeroed until the snapshot is placed:
 * the upload keeps a copy of that part, and placing rewrites it with the
 * header, which names the sequence number.
 *
 * A connection found lost at the start (connection.ts) is tried again; once
 * parts have gone out, the body's slices are spent, and the write fails
 * (the snapshot is due again, as after any failed write).
 */
import type { Writable } from 'node:stream'
import { assert } from '../../assert.js'
import type { SnapshotSource } from '../ports.js'
import { snapshotInParts } from '../snapshotFile.js'
import { SNAPSHOT_FORMAT } from '../snapshotHeader.js'
import { copyInHeader, copyInRow, copyInTrailer } from './binaryCopy.js'
import { retryingLostConnection, type Sql } from './connection.js'

/** The most bytes of one snapshot_parts row. */
export const PART_BYTES = 1024 * 1024

/** A snapshot stored unplaced (see the top). */
export interface UploadedSnapshot {
  format: number
  bodyBytes: number
  sha256: string
  parts: number
  totalBytes: number
  /** A copy of the first part, its header room zeroed. */
  firstPart: Buffer
}

/** Writes `bytes` into the COPY, once the client took the previous write (its socket's callback). */
function written(copy: Writable, bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => copy.write(bytes, (error) => (error ? reject(error) : resolve())))
}

function ended(copy: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    copy.once('error', reject)
    copy.end((error?: Error | null) => (error ? reject(error) : resolve()))
  })
}

/** Stores the snapshot of `body` as the unplaced snapshot `unplacedSeq` of the tenant (see the top). */
export async function uploadSnapshot(sql: Sql, tenant: string, unplacedSeq: number, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<UploadedSnapshot> {
  const encoding = snapshotInParts(tenant, at, body, PART_BYTES, onProgress)
  let started = false
  return retryingLostConnection(
    () =>
      sql.begin(async (tx) => {
        await tx`INSERT INTO snapshots (tenant, seq, at, format, body_bytes, sha256, parts, total_bytes)
           VALUES (${tenant}, ${String(unplacedSeq)}, ${String(at)}, ${SNAPSHOT_FORMAT}, 0, '', 0, 0)`
        const copy = (await tx`COPY snapshot_parts (tenant, seq, part, bytes) FROM STDIN (FORMAT binary)`.writable()) as Writable
        await written(copy, copyInHeader())
        let parts = 0
        let totalBytes = 0
        let firstPart: Buffer | null = null
        started = true
        let next = await encoding.next()
        for (; next.done !== true; next = await encoding.next()) {
          const part = next.value
          if (firstPart === null) firstPart = Buffer.from(part)
          for (const piece of copyInRow([{ text: tenant }, { int8: unplacedSeq }, { int4: parts }, { bytes: part }])) await written(copy, piece)
          parts += 1
          totalBytes += part.length
        }
        await written(copy, copyInTrailer())
        await ended(copy)
        const { bodyBytes, sha256 } = next.value
        await tx`UPDATE snapshots SET body_bytes = ${String(bodyBytes)}, sha256 = ${sha256}, parts = ${parts}, total_bytes = ${String(totalBytes)}
           WHERE tenant = ${tenant} AND seq = ${String(unplacedSeq)}`
        assert(firstPart !== null, 'a snapshot has a first part')
        return { format: SNAPSHOT_FORMAT, bodyBytes, sha256, parts, totalBytes, firstPart }
      }) as Promise<UploadedSnapshot>,
    () => !started,
  )
}
