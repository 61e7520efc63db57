/*
 * The rows of a column table as they were at one moment (ColumnTable.frozen),
 * for a snapshot writer that reads them a slice per event-loop turn while
 * the tenant goes on: the live flags and columns of that moment (a write
 * after it copies the chunk it changes first: rowChunks.ts FreezeState),
 * the records made from them on demand, the columns as a snapshot stores
 * them. `release` once read, so later writes stop copying.
 */
import type { Rec } from '../domain/schema.js'
import { LiveRows } from './liveRows.js'
import type { TableImage } from './tableImage.js'

/** The rows of a table as they were at one moment (ColumnTable.frozen); `release` once read. */
export class FrozenTable {
  private released = false

  constructor(
    readonly rowCount: number,
    /** Live rows. */
    readonly size: number,
    private readonly alive: readonly (Uint8Array | null)[],
    /** The record at a row, as it was. */
    readonly record: (row: number) => Rec,
    /** The columns as a snapshot stores them (tableImage.ts), as they were. */
    readonly image: () => TableImage,
    private readonly onRelease: () => void,
  ) {}

  rows(from = 0): LiveRows {
    return new LiveRows(this.alive, this.rowCount, from)
  }

  /** The live rows' records, `records` at a time, made as each slice is asked for. */
  *slices(records: number): IterableIterator<Rec[]> {
    let slice: Rec[] = []
    for (const row of this.rows()) {
      slice.push(this.record(row))
      if (slice.length === records) {
        yield slice
        slice = []
      }
    }
    if (slice.length > 0) yield slice
  }

  release(): void {
    if (this.released) return
    this.released = true
    this.onRelease()
  }
}
