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

/** The largest string pool whose answers a memo keeps in an array of a byte per code (allocated per read). */
const MEMO_ARRAY_MAX = 65_536

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
    // 0: not known yet, 1 true, 2 false, 3 null. Codes are below the pool's length + 1 while the read runs; a pool
    // too large to give each code a byte per read (unique texts) has its answers in a map.
    const poolSize = this.collection.pool.texts.length + 1
    const bytes = poolSize <= MEMO_ARRAY_MAX ? new Int8Array(poolSize) : null
    const map = bytes === null ? new Map<number, number>() : null
    return (row, context) => {
      if (column.misfits !== null && column.misfits.has(row)) return evaluate(row, context)
      const code = column.code(row)
      const known = bytes !== null ? bytes[code] : map?.get(code)
      if (known !== 0 && known !== undefined) return known === 1 ? true : known === 2 ? false : null
      const value = evaluate(row, context)
      const answer = value === true ? 1 : value === false ? 2 : value === null ? 3 : 0
      if (answer !== 0) {
        if (bytes !== null) bytes[code] = answer
        else map?.set(code, answer)
      }
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
