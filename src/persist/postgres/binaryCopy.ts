/*
 * PostgreSQL's binary COPY format, both ways, for the bytes of snapshots
 * (snapshot_parts.bytes, a megabyte a row). A query's answer carries a
 * `bytea` as hex text, the only format the client asks for: twice its size,
 * encoded by the server, decoded by the client into a string and then into
 * a buffer (for a million records' snapshot, most of a cluster node's
 * activation went there); a COPY in the binary format carries the bytes as
 * they are, each row in one message of the protocol, both to the node
 * (`COPY (SELECT …) TO STDOUT`) and from it (`COPY … FROM STDIN`).
 *
 *   header    "PGCOPY\n\377\r\n\0", int32 flags (0), int32 length of an
 *             extension area, that area
 *   a row     int16 the count of fields, then per field an int32 length
 *             (-1: null) and that many bytes (a bytea's: its bytes; an
 *             int8's, an int4's: big-endian; a text's: UTF-8)
 *   trailer   int16 -1
 *
 * CopyOutRows reads such a stream as it arrives, in chunks cut anywhere,
 * and hands out each row's fields as views of the chunks where a field lies
 * in one (no copy), copied together only where it straddles two. The
 * encoders write the header, a row and the trailer for COPY FROM STDIN.
 * COPY takes no parameters: what it selects is written into its text, as a
 * quoted literal (sqlLiteral).
 */
import { assert } from '../../assert.js'

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1')
/** The signature, the flags and the extension area's length. */
const HEADER_BYTES = SIGNATURE.length + 4 + 4
const TRAILER = -1

/** Reads a binary COPY of rows of `fieldCount` non-null fields, chunk by chunk (see the top). */
export class CopyOutRows {
  private pending: Buffer[] = []
  private pendingBytes = 0
  /** What is read next: the header, its extension area, a row's field count, a field's length, a field's bytes. */
  private expecting: 'header' | 'extension' | 'row' | 'length' | 'field' | 'ended' = 'header'
  private wantedBytes = HEADER_BYTES
  private row: Buffer[] = []

  constructor(private readonly fieldCount: number) {}

  /** The rows the chunk completes. */
  push(chunk: Buffer): Buffer[][] {
    const rows: Buffer[][] = []
    let at = 0
    while (at < chunk.length) {
      if (this.expecting === 'ended') throw new Error('binary COPY: bytes after its trailer')
      const needed = this.wantedBytes - this.pendingBytes
      if (this.pendingBytes === 0 && chunk.length - at >= needed) {
        // The whole piece lies in this chunk: a view of it.
        this.took(chunk.subarray(at, at + needed), rows)
        at += needed
        continue
      }
      const taken = chunk.subarray(at, at + Math.min(needed, chunk.length - at))
      this.pending.push(taken)
      this.pendingBytes += taken.length
      at += taken.length
      if (this.pendingBytes === this.wantedBytes) {
        const piece = Buffer.concat(this.pending, this.pendingBytes)
        this.pending = []
        this.pendingBytes = 0
        this.took(piece, rows)
      }
    }
    return rows
  }

  /** Throws unless the stream ended with its trailer. */
  end(): void {
    if (this.expecting !== 'ended') throw new Error('binary COPY: the stream ended before its trailer')
  }

  private took(piece: Buffer, rows: Buffer[][]): void {
    switch (this.expecting) {
      case 'header': {
        if (!piece.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('binary COPY: bad signature')
        this.expect('extension', piece.readUInt32BE(SIGNATURE.length + 4))
        if (this.wantedBytes === 0) this.expect('row', 2)
        return
      }
      case 'extension':
        this.expect('row', 2)
        return
      case 'row': {
        const count = piece.readInt16BE(0)
        if (count === TRAILER) {
          this.expect('ended', 0)
          return
        }
        if (count !== this.fieldCount) throw new Error(`binary COPY: a row of ${count} fields, not ${this.fieldCount}`)
        this.expect('length', 4)
        return
      }
      case 'length': {
        const length = piece.readInt32BE(0)
        if (length < 0) throw new Error('binary COPY: a null field')
        this.expect('field', length)
        if (length === 0) this.took(Buffer.alloc(0), rows)
        return
      }
      case 'field':
        this.row.push(piece)
        if (this.row.length < this.fieldCount) {
          this.expect('length', 4)
          return
        }
        rows.push(this.row)
        this.row = []
        this.expect('row', 2)
        return
    }
  }

  private expect(what: CopyOutRows['expecting'], bytes: number): void {
    this.expecting = what
    this.wantedBytes = bytes
  }
}

/** The start of a binary COPY FROM STDIN: signature, no flags, no extension area. */
export function copyInHeader(): Buffer {
  const header = Buffer.alloc(HEADER_BYTES)
  SIGNATURE.copy(header, 0)
  return header
}

/** The end of a binary COPY FROM STDIN. */
export function copyInTrailer(): Buffer {
  return int16(TRAILER)
}

/** A field of a row: a text's UTF-8, an int8 (`bigint`), an int4 (`int`), or a bytea's bytes. */
export type CopyField = { text: string } | { int8: number } | { int4: number } | { bytes: Uint8Array }

/**
 * One row of `fields` for a binary COPY FROM STDIN, as the pieces to write in order: the counts, lengths and small
 * fields put together, and each bytea's bytes as they are (the client copies what it is given into its message).
 */
export function copyInRow(fields: readonly CopyField[]): Uint8Array[] {
  const pieces: Uint8Array[] = []
  let small: Buffer[] = [int16(fields.length)]
  for (const field of fields) {
    if ('bytes' in field) {
      pieces.push(Buffer.concat([...small, int32(field.bytes.length)]), field.bytes)
      small = []
      continue
    }
    const bytes = 'text' in field ? Buffer.from(field.text, 'utf8') : 'int8' in field ? int64(field.int8) : int32(field.int4)
    small.push(int32(bytes.length), bytes)
  }
  if (small.length > 0) pieces.push(Buffer.concat(small))
  return pieces
}

function int16(value: number): Buffer {
  const bytes = Buffer.alloc(2)
  bytes.writeInt16BE(value)
  return bytes
}

function int32(value: number): Buffer {
  const bytes = Buffer.alloc(4)
  bytes.writeInt32BE(value)
  return bytes
}

function int64(value: number): Buffer {
  assert(Number.isSafeInteger(value), 'an int8 of COPY is a safe integer')
  const bytes = Buffer.alloc(8)
  bytes.writeBigInt64BE(BigInt(value))
  return bytes
}

/** `text` as an SQL string literal, whatever standard_conforming_strings says (an escape string: E'…'). */
export function sqlLiteral(text: string): string {
  if (text.includes('\0')) throw new Error('an SQL literal cannot hold a NUL character')
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
}
