/*
 * The records a collection made for reads of one record (`byId`) and of
 * pages (`atRow`), by row, until their row changes (`changed`): while a
 * record does not change, reading it again gives the very object it gave
 * before (the rendered JSON of a record is kept by its object:
 * domain/renderedJson.ts), and costs no second making. At most
 * KEPT_RECORDS_MAX (then it starts over); scans and `values` make records
 * without keeping them.
 *
 * The records kept for other rows than a changed one stay (a row keeps its
 * number while its record lives, and a removed row's number is never given
 * to another: columnTable.ts), so the reads by id of a write's project or
 * user after another write are still one Map lookup.
 */
import type { Rec } from '../domain/schema.js'
import { assertionFailed } from '../assert.js'
import type { ColumnTable } from './columnTable.js'

/** The most records made for reads by id or for pages that a collection keeps until its next change. */
const KEPT_RECORDS_MAX = 1024

export class KeptRecords {
  private readonly kept = new Map<number, Rec>()
  /** The records of `kept` that reads by id asked for, by id: a read by id again is one Map lookup. */
  private readonly keptById = new Map<string, Rec>()

  constructor(private readonly table: ColumnTable) {}

  /** The record with this id (undefined: none), kept. */
  byId(id: string): Rec | undefined {
    const known = this.keptById.get(id)
    if (known !== undefined) return known
    const row = this.table.rowOf(id)
    if (row < 0) return undefined
    const rec = this.atRow(row, id)
    this.keptById.set(id, rec)
    return rec
  }

  /** The record at a live row, kept. */
  atRow(row: number, id?: string): Rec {
    let rec = this.kept.get(row)
    if (rec === undefined) {
      rec = this.table.record(row, id)
      if (this.kept.size >= KEPT_RECORDS_MAX) {
        this.kept.clear()
        this.keptById.clear()
      }
      this.kept.set(row, rec)
    }
    return rec
  }

  /** The record at a live row as it is now: the kept one, or one made and not kept (a write's before-image). */
  current(row: number): Rec {
    return this.kept.get(row) ?? this.table.record(row)
  }

  /** `row` (a row that held a record before; -1: none) is written over or removed: its record, and `id`'s, are not current any more. */
  changed(row: number, id: string | undefined): void {
    if (row >= 0) this.kept.delete(row)
    if (id !== undefined) this.keptById.delete(id)
    // Every record kept by id is kept by its row too, so dropping a changed row's record drops its id's (O(1) check).
    if (this.keptById.size > this.kept.size) assertionFailed(`${this.table.decl.type}: ${this.keptById.size} records kept by id, ${this.kept.size} by row`)
  }
}
