/*
 * The rows of one index key (postingIndex.ts, dateBuckets.ts), ascending:
 * an Int32Array of row numbers, 4 bytes a record, instead of an array of
 * record objects (8 bytes a slot, and the objects themselves).
 *
 * Rows are numbered as they are appended (columnTable.ts), so the rows of
 * a key in ascending order are its records in the order of the collection,
 * and a new record comes last: an add is a push. A record that comes to a
 * key later (its value changed) or leaves it moves at most the rows after
 * it (a binary search, then one copyWithin). An update that changes no
 * indexed value touches no set at all: the row stays the row.
 *
 * The array grows by doubling (a copy of the set's rows, never of the
 * collection's); `trim` gives back what a load's growth left free.
 */
import { assertionFailed } from '../assert.js'

/** Iterates rows of an Int32Array, reusing one result object (a walk of a million rows allocates nothing). */
export class RowWalk implements IterableIterator<number> {
  private at: number
  private readonly result = { done: false, value: 0 }

  constructor(
    private readonly rows: Int32Array,
    private readonly end: number,
    from = 0,
  ) {
    this.at = from
  }

  [Symbol.iterator](): IterableIterator<number> {
    return this
  }

  next(): IteratorResult<number> {
    if (this.at >= this.end) return DONE
    this.result.value = this.rows[this.at] as number
    this.at += 1
    return this.result
  }
}

export const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined }

/** The first position in `rows[0, size)` not below `row`. */
function positionOf(rows: Int32Array, size: number, row: number): number {
  let low = 0
  let high = size
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((rows[middle] as number) < row) low = middle + 1
    else high = middle
  }
  return low
}

export class RowSet {
  rows: Int32Array
  size = 0

  constructor(capacity = 2) {
    this.rows = new Int32Array(capacity)
  }

  add(row: number): void {
    const size = this.size
    if (size === this.rows.length) this.grow()
    const rows = this.rows
    if (size === 0 || (rows[size - 1] as number) < row) {
      rows[size] = row
      this.size = size + 1
      return
    }
    const at = positionOf(rows, size, row)
    if (rows[at] === row) assertionFailed(`RowSet: row ${row} added twice`)
    rows.copyWithin(at + 1, at, size)
    rows[at] = row
    this.size = size + 1
  }

  remove(row: number): void {
    const at = positionOf(this.rows, this.size, row)
    if (at >= this.size || this.rows[at] !== row) assertionFailed(`RowSet: row ${row} is not held`)
    this.rows.copyWithin(at, at + 1, this.size)
    this.size -= 1
  }

  has(row: number): boolean {
    const at = positionOf(this.rows, this.size, row)
    return at < this.size && this.rows[at] === row
  }

  values(): RowWalk {
    return new RowWalk(this.rows, this.size)
  }

  /** The rows as an array of their own (a copy). */
  toArray(): Int32Array {
    return this.rows.slice(0, this.size)
  }

  /**
   * Adds `rows`, ascending and each after every row held (RowKeySet.takeRows): an empty set takes the array itself
   * as its rows, which may be a view into a larger array shared with other sets (a load's: Collection.finishLoadSteps);
   * it is copied when the set grows past it or is trimmed, like any array the set outgrows.
   */
  takeRows(rows: Int32Array): void {
    if (this.size === 0) {
      this.rows = rows
      this.size = rows.length
      return
    }
    if (this.size + rows.length > this.rows.length) {
      const grown = new Int32Array(this.size + rows.length)
      grown.set(this.rows.subarray(0, this.size))
      this.rows = grown
    }
    for (const row of rows) this.add(row)
  }

  /** Gives back the room beyond the rows. */
  trim(): void {
    if (this.rows.length > this.size) this.rows = this.rows.slice(0, Math.max(this.size, 1))
  }

  private grow(): void {
    const grown = new Int32Array(Math.max(4, this.rows.length * 2))
    grown.set(this.rows)
    this.rows = grown
  }
}
