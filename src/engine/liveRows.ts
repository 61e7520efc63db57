/*
 * The live rows of a column table (or of a frozen one) in row order, read
 * from its live flags a chunk at a time (rowChunks.ts): a chunk whose rows
 * are all removed (null flags) is skipped whole. One iterator object whose
 * result is reused, so walking a million rows allocates nothing per row.
 */
import { CHUNK_BITS, CHUNK_MASK } from './rowChunks.js'

/** The live rows from `from` on, in order: an iterator object reusing its result (see rowSet.ts RowWalk). */
export class LiveRows implements IterableIterator<number> {
  private row: number
  private readonly result = { done: false, value: 0 }

  constructor(
    private readonly alive: readonly (Uint8Array | null)[],
    private readonly end: number,
    from: number,
  ) {
    this.row = from
  }

  [Symbol.iterator](): IterableIterator<number> {
    return this
  }

  /** The next live row, or -1 after the last. */
  nextRow(): number {
    const { alive, end } = this
    let row = this.row
    while (row < end) {
      const flags = alive[row >>> CHUNK_BITS]
      if (flags === null || flags === undefined) {
        row = ((row >>> CHUNK_BITS) + 1) << CHUNK_BITS
        continue
      }
      if (flags[row & CHUNK_MASK] === 1) {
        this.row = row + 1
        return row
      }
      row += 1
    }
    this.row = end
    return -1
  }

  next(): IteratorResult<number> {
    const row = this.nextRow()
    if (row < 0) return { done: true, value: undefined }
    this.result.value = row
    return this.result
  }
}
