/*
 * A field's values by row when no typed array holds them (lists of
 * references, a row's extras: columnTable.ts): a chunk is a plain array,
 * or no array while every row of the chunk holds one value.
 */
import { ChunkStamps, type Column, type ColumnReader } from './columns.js'
import { CHUNK_BITS, CHUNK_MASK, CHUNK_ROWS, type FreezeState } from './rowChunks.js'
import type { ValueChunks } from './tableImage.js'

/** A chunk's constant before its first row. */
const NO_ROWS = Symbol('no rows')

export class ValueView implements ColumnReader {
  constructor(
    readonly arrays: (unknown[] | null)[],
    readonly constants: unknown[],
  ) {}

  get(row: number): unknown {
    const chunk = row >>> CHUNK_BITS
    const values = this.arrays[chunk]
    if (values !== null && values !== undefined) return values[row & CHUNK_MASK]
    const constant = this.constants[chunk]
    return constant === NO_ROWS ? null : constant
  }
}

export class ValueColumn extends ValueView implements Column {
  private readonly stamps: ChunkStamps

  constructor(freeze: FreezeState) {
    super([], [])
    this.stamps = new ChunkStamps(freeze)
  }

  write(row: number, value: unknown, fresh: boolean): void {
    const chunk = row >>> CHUNK_BITS
    const at = row & CHUNK_MASK
    const { arrays, constants } = this
    while (constants.length <= chunk) {
      arrays.push(null)
      constants.push(NO_ROWS)
      this.stamps.add()
    }
    let values = arrays[chunk]
    if (values !== null && values !== undefined) {
      if (!fresh && this.stamps.shared(chunk, row)) {
        values = values.slice()
        arrays[chunk] = values
        this.stamps.stamp(chunk)
      }
      values[at] = value
      return
    }
    const constant = constants[chunk]
    if (constant === NO_ROWS) {
      constants[chunk] = value
      return
    }
    if (Object.is(constant, value)) return
    const made = new Array<unknown>(CHUNK_ROWS).fill(constant)
    made[at] = value
    arrays[chunk] = made
    constants[chunk] = null
    this.stamps.stamp(chunk)
  }

  clear(): void {
    // Nothing is held for a value: the row is skipped from now on.
  }

  dropChunk(chunk: number): void {
    this.arrays[chunk] = null
    this.constants[chunk] = null
  }

  /** Takes a snapshot's chunks (tableImage.ts) as its own; the column held no rows. */
  adopt(image: ValueChunks): void {
    this.stamps.adopt([this.arrays, this.constants], [image.arrays, image.constants])
  }

  frozen(): ValueView {
    return new ValueView(this.arrays.slice(), this.constants.slice())
  }

  arrayBytes(): number {
    let bytes = 0
    for (const values of this.arrays) bytes += values === null ? 0 : values.length * 8
    return bytes
  }
}
