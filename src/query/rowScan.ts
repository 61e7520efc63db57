/*
 * What a scan reads of a row (design §11: scans read columns, and make
 * records only of what they return). A compiled `$filter`, the `$orderby`
 * keys and a summary are bound to one collection of one tenant here: a
 * field path that reads a stored field as it is (fieldPath.ts
 * `storedField`: `description`, `project/id`) reads that field's column
 * at the row; any other path (through a reference, a derived field, a
 * display name, a list) reads the record, made once per row however many
 * such paths ask (the last one made is kept).
 *
 * A part of a filter that depends on nothing but one text or reference
 * column (`substringof('call', description)`, `project/id eq '…'`,
 * `tolower(name) eq 'x'`) has one answer per distinct text: `memo` keeps
 * the answers by the column's pool code, so a scan of a million time
 * records saying one of a few hundred things computes each thing once.
 * The tenant is held while a read runs (slicedRead.ts), so the codes keep
 * their texts for the binding's life.
 */
import type { DisplayContext, Rec } from '../domain/schema.js'
import type { Collection } from '../engine/collection.js'
import { CodeColumn, type Column } from '../engine/columns.js'
import type { ResolvedPath } from './fieldPath.js'
import { compareValues, type OrderKey } from './orderBy.js'

/** A value of the row at `row` (the scan's subject). */
export type RowRead = (row: number, context: DisplayContext) => unknown

export class RowBinding {
  private lastRow = -1
  private lastRecord: Rec | null = null

  constructor(readonly collection: Collection) {}

  /** The record at `row`, made once for consecutive asks. */
  record(row: number): Rec {
    if (row !== this.lastRow || this.lastRecord === null) {
      this.lastRecord = this.collection.table.record(row)
      this.lastRow = row
    }
    return this.lastRecord
  }

  /** The column a path reads as it is, or undefined when the path reads the record. */
  columnOf(path: ResolvedPath): Column | undefined {
    return path.storedField === undefined ? undefined : this.collection.column(path.storedField)
  }

  /** The reader of a path at a row: its column, or the record (see the top). */
  reader(path: ResolvedPath): RowRead {
    const column = this.columnOf(path)
    if (column !== undefined) return (row) => column.get(row) ?? null
    const get = path.get
    return (row, context) => get(this.record(row), context)
  }

  /**
   * `evaluate`, remembered by the pool code of the one text or reference column it depends on (`path`), when its
   * answer is a boolean or null; `evaluate` itself for a path read otherwise.
   */
  memo(path: ResolvedPath, evaluate: RowRead): RowRead {
    const column = this.columnOf(path)
    if (!(column instanceof CodeColumn)) return evaluate
    // 0: not known yet, 1 true, 2 false, 3 null (codes are below the pool's length + 1 while the read runs).
    const answers = new Int8Array(this.collection.pool.texts.length + 1)
    return (row, context) => {
      if (column.misfits !== null && column.misfits.has(row)) return evaluate(row, context)
      const code = column.code(row)
      const known = answers[code]
      if (known !== 0 && known !== undefined) return known === 1 ? true : known === 2 ? false : null
      const value = evaluate(row, context)
      if (value === true) answers[code] = 1
      else if (value === false) answers[code] = 2
      else if (value === null) answers[code] = 3
      return value
    }
  }

  /** `$orderby` over rows: the keys read by `reader`, ties broken by id (as recordComparator does over records). */
  comparator(keys: readonly OrderKey[], context: DisplayContext): (a: number, b: number) => number {
    const readers = keys.map((key) => ({ read: this.reader(key.path), descending: key.descending }))
    const ids = this.collection.table.ids
    return (a, b) => {
      for (const { read, descending } of readers) {
        const order = compareValues(read(a, context), read(b, context))
        if (order !== 0) return descending ? -order : order
      }
      return ids.compare(a, b)
    }
  }
}
