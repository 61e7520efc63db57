/*
 * A snapshot as a node holds it once read from PostgreSQL (preparedTenant.ts):
 * its snapshot_parts rows as they arrived, never joined into one buffer.
 *
 * They are read by a binary COPY (binaryCopy.ts: the bytes as they are,
 * where a query would carry them as hex text) and checked as they arrive:
 * the header from the first part, the body's length and SHA-256 over each
 * part in turn, then the tenant and sequence number the header names, with
 * the checks and the words a file's reader uses (snapshotHeader.ts). What
 * was checked is what is held, so it is not hashed again when read.
 *
 * Read back (heldSnapshotSteps), a format 6 body is read through a reader
 * that walks the parts (snapshotFormat6.ts format6BodySteps: each column
 * chunk copied from the part or parts it lies in); an older format, read
 * from one buffer, gets the parts joined.
 */
import crypto from 'node:crypto'
import type { Steps } from '../../engine/steps.js'
import { type SnapshotBody, type SnapshotHeader, SnapshotInvalidError } from '../ports.js'
import { snapshotBytesSteps } from '../snapshotReading.js'
import { format6BodySteps, type BodyReader } from '../snapshotFormat6.js'
import { checkBodyBytes, checkSha256, decodeHeader } from '../snapshotHeader.js'
import { CopyOutRows, sqlLiteral } from './binaryCopy.js'
import type { Sql } from './connection.js'

/** A snapshot's parts, in order; the first holds the header. */
export interface HeldSnapshot {
  readonly parts: readonly Buffer[]
}

/** Checks a snapshot's parts as they arrive (see the top). */
class PartsCheck {
  private header: { header: SnapshotHeader; bodyOffset: number } | null = null
  private failure: string | null = null
  private readonly hash = crypto.createHash('sha256')
  private bodyBytes = 0

  constructor(
    private readonly tenant: string,
    private readonly seq: number,
  ) {}

  add(part: Buffer): void {
    if (this.failure !== null) return
    let body = part
    if (this.header === null) {
      try {
        this.header = decodeHeader(part)
      } catch (error) {
        this.failure = messageOf(error)
        return
      }
      body = part.subarray(this.header.bodyOffset)
    }
    this.hash.update(body)
    this.bodyBytes += body.length
  }

  /** Why the parts added cannot be the snapshot of the tenant at the sequence number, or null when they can. */
  problem(): string | null {
    if (this.failure !== null) return this.failure
    try {
      // No part: what decodeHeader says of no bytes.
      const { header } = this.header ?? decodeHeader(Buffer.alloc(0))
      checkBodyBytes(header, this.bodyBytes)
      checkSha256(header, this.hash.digest('hex'))
      if (header.tenant !== this.tenant || header.seq !== this.seq) return `the header names tenant '${header.tenant}' at seq ${header.seq}, not tenant '${this.tenant}' at seq ${this.seq}`
      return null
    } catch (error) {
      return messageOf(error)
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** The tenant's snapshot at `seq`, its parts read in order by a binary COPY and checked as they arrive (see the top). */
export async function readHeldSnapshot(sql: Sql, tenant: string, seq: number): Promise<{ held: HeldSnapshot; problem: string | null }> {
  if (!Number.isSafeInteger(seq)) throw new Error(`a snapshot's sequence number is an integer, not ${seq}`)
  const stream = await sql.unsafe(`COPY (SELECT bytes FROM snapshot_parts WHERE tenant = ${sqlLiteral(tenant)} AND seq = ${seq} ORDER BY part) TO STDOUT (FORMAT binary)`).readable()
  const rows = new CopyOutRows(1)
  const check = new PartsCheck(tenant, seq)
  const parts: Buffer[] = []
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    for (const [part] of rows.push(chunk)) {
      if (part === undefined) continue
      check.add(part)
      parts.push(part)
    }
  }
  rows.end()
  return { held: { parts }, problem: check.problem() }
}

/** Reads body bytes from the parts, the body starting `bodyOffset` bytes into them (format6BodySteps reads in order). */
function partsReader(parts: readonly Buffer[], bodyOffset: number): BodyReader {
  let index = 0
  let partStart = 0
  return (into, offset) => {
    let at = bodyOffset + offset
    if (at < partStart) {
      index = 0
      partStart = 0
    }
    for (let filled = 0; filled < into.length; ) {
      while (index < parts.length && at >= partStart + (parts[index]?.length ?? 0)) {
        partStart += parts[index]?.length ?? 0
        index += 1
      }
      const part = parts[index]
      if (part === undefined) throw new SnapshotInvalidError(`the body ends early, at byte ${partStart - bodyOffset} (a torn snapshot?)`)
      const from = at - partStart
      const length = Math.min(into.length - filled, part.length - from)
      into.set(part.subarray(from, from + length), filled)
      filled += length
      at += length
    }
  }
}

/** The header and body of a held snapshot, as steps (a pause every few megabytes of columns, after each slice). */
export function* heldSnapshotSteps(held: HeldSnapshot): Steps<{ header: SnapshotHeader; body: SnapshotBody }> {
  const first = held.parts[0]
  if (first === undefined) throw new SnapshotInvalidError('not a TimeLedger snapshot (bad magic)')
  const { header, bodyOffset } = decodeHeader(first)
  if (header.format < 6) return yield* snapshotBytesSteps(Buffer.concat(held.parts))
  return { header, body: yield* format6BodySteps(header.bodyBytes, bodyOffset, partsReader(held.parts, bodyOffset)) }
}
