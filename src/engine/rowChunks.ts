/*
 * Rows of a collection's columns, in chunks, and the copy-on-write that lets
 * a frozen view of the columns read one moment while writes go on.
 *
 * A column holds its rows in chunks of CHUNK_ROWS: a column grows by a chunk
 * (never by copying the whole column: no stall however large it is), and a
 * chunk chooses its own encoding (columns.ts), so widening one moves
 * CHUNK_ROWS values at most.
 *
 * A frozen view (a snapshot being written a slice per event-loop turn)
 * holds the chunk arrays as they are when it is taken. Rows are only
 * appended after it, beyond the rows it reads, so appending never disturbs
 * it; a write *over* a row it may read (an update, a removal) first copies
 * that chunk, once per view (FreezeState: the chunk's copy is stamped with
 * the view's epoch). While no view is open nothing is ever copied.
 */
import { assertionFailed } from '../assert.js'

export const CHUNK_BITS = 12
/** Rows per chunk (a power of two: row = chunk × CHUNK_ROWS + offset). */
export const CHUNK_ROWS = 1 << CHUNK_BITS
export const CHUNK_MASK = CHUNK_ROWS - 1

/** A table's open frozen views, as its columns consult them before changing a row in place. */
export class FreezeState {
  /** Raised by each freeze: a chunk copied at this epoch is the live state's own. */
  epoch = 0
  /** Rows below this may be read by an open view (0: none is open). */
  frozenRows = 0
  private open = 0

  /** A view of the first `rows` rows opens: chunks they lie in are copied before their next change. */
  freeze(rows: number): void {
    this.epoch += 1
    this.open += 1
    this.frozenRows = Math.max(this.frozenRows, rows)
  }

  release(): void {
    this.open -= 1
    if (this.open < 0) assertionFailed('a frozen view released that was never opened, or twice')
    if (this.open === 0) this.frozenRows = 0
  }

  get views(): number {
    return this.open
  }
}
