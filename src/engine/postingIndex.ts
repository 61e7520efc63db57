/*
 * A value → rows index: the secondary index of one indexed field of a
 * collection (a reference or a text, so a value is a code of the tenant's
 * string pool: stringPool.ts). Each key's rows are a row set, either
 * ascending (rowSet.ts: the collection's order) or readable in the order
 * of a date field (orderedRows.ts); a key goes when its last row does.
 *
 * It holds row numbers, not records: a list pinned to a project reads the
 * project's rows from here and the columns it needs of each (4 bytes a
 * record per index, where a record object cost a pointer and had to be
 * replaced in every index on every update). A value the column holds
 * aside as a misfit (columns.ts: not a text) is a key by that value.
 */
import { assertionFailed } from '../assert.js'

/** What an index keeps for one key. */
export interface RowKeySet {
  readonly size: number
  add(row: number): void
  remove(row: number): void
  values(): IterableIterator<number>
  /** Gives back the room its array keeps beyond its rows (Collection.trimSteps). */
  trim(): void
  /** Adds `rows`, ascending and each after every row held, at once (a load: RowSet.takeRows). */
  takeRows(rows: Int32Array): void
}

export class PostingIndex<S extends RowKeySet> {
  private readonly byCode = new Map<number, S>()
  private readonly byMisfit = new Map<unknown, S>()

  constructor(private readonly newSet: () => S) {}

  /** The rows of the key: a pool code, or (code 0) a misfit value; undefined when the key has none. */
  setOf(code: number, misfit: unknown = null): S | undefined {
    return code !== 0 ? this.byCode.get(code) : this.byMisfit.get(misfit)
  }

  count(code: number, misfit: unknown = null): number {
    return this.setOf(code, misfit)?.size ?? 0
  }

  add(code: number, misfit: unknown, row: number): void {
    const keys = code !== 0 ? this.byCode : this.byMisfit
    const key = code !== 0 ? code : misfit
    let set = keys.get(key)
    if (set === undefined) {
      set = this.newSet()
      keys.set(key, set)
    }
    set.add(row)
  }

  /**
   * Adds `rows` (ascending, each after every row the key holds) to the key of a pool code at once (RowKeySet.takeRows);
   * the rows the key holds now (what taking them may have copied).
   */
  addRows(code: number, rows: Int32Array): number {
    let set = this.byCode.get(code)
    if (set === undefined) {
      set = this.newSet()
      this.byCode.set(code, set)
    }
    set.takeRows(rows)
    return set.size
  }

  remove(code: number, misfit: unknown, row: number): void {
    const keys = code !== 0 ? this.byCode : this.byMisfit
    const key = code !== 0 ? code : misfit
    const set = keys.get(key)
    if (set === undefined) assertionFailed(`PostingIndex: no rows for the key of row ${row}`)
    set.remove(row)
    if (set.size === 0) keys.delete(key)
  }

  /** Trims every key's row set (RowKeySet.trim). */
  trim(): void {
    for (const set of this.byCode.values()) set.trim()
    for (const set of this.byMisfit.values()) set.trim()
  }
}
