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
 *
 * A collection has one binding (`RowBinding.of`), shared by every scan of
 * it, and what is compiled over it (a filter's row predicate:
 * filterCompiler.ts bindRows) is kept with it: a list page read again
 * compiles nothing and allocates no memo. What a binding remembers stays
 * true across reads: a memo's answers hold while the pool gives no freed
 * code to another text (StringPool.reuses; checked at each use), the
 * record made last while the collection does not change
 * (Collection.version). Within one read the tenant is held
 * (slicedRead.ts), so neither moves while it runs.
 */
import type { DisplayContext, Rec } from '../domain/schema.js'
import type { Collection } from '../engine/collection.js'
import { CodeColumn, CodeView, NumberView, type Column } from '../engine/columns.js'
import { FlagView } from '../engine/flagColumn.js'
import type { ResolvedPath } from './fieldPath.js'
import { compareValues, type OrderKey } from './orderBy.js'

/** Codes below this have a memo's answers in an array of a byte per code (grown to the largest code seen); others in a map. */
const MEMO_ARRAY_MAX = 65_536
/** The most answers a memo keeps in its map (codes of MEMO_ARRAY_MAX on: a pool of unique texts); then it starts over. */
const MEMO_MAP_MAX = 65_536

/** A value of the row at `row` (the scan's subject). */
export type RowRead = (row: number, context: DisplayContext) => unknown

const bindings = new WeakMap<Collection, RowBinding>()

/** The reader of a column's values, null for none: a function per kind of column, so that each call site sees one. */
function columnReader(column: Column): RowRead {
  if (column instanceof CodeView) return (row) => column.get(row) ?? null
  if (column instanceof NumberView) return (row) => column.get(row) ?? null
  if (column instanceof FlagView) return (row) => column.get(row) ?? null
  return (row) => column.get(row) ?? null
}

export class RowBinding {
  private lastRow = -1
  private lastVersion = -1
  private lastRecord: Rec | null = null

  /** A binding of its own (a test's); scans share the collection's: `of`. */
  constructor(readonly collection: Collection) {}

  /** The collection's binding, shared by its scans (see the top). */
  static of(collection: Collection): RowBinding {
    let binding = bindings.get(collection)
    if (binding === undefined) {
      binding = new RowBinding(collection)
      bindings.set(collection, binding)
    }
    return binding
  }

  /** The record at `row`, made once for consecutive asks while the collection does not change. */
  record(row: number): Rec {
    const version = this.collection.version
    if (row !== this.lastRow || version !== this.lastVersion || this.lastRecord === null) {
      this.lastRecord = this.collection.table.record(row)
      this.lastRow = row
      this.lastVersion = version
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
    if (column !== undefined) return columnReader(column)
    const get = path.get
    return (row, context) => get(this.record(row), context)
  }

  /**
   * `evaluate`, remembered by the pool code of the one text or reference column it depends on (`path`), when its
   * answer is a boolean or null; `evaluate` itself for a path read otherwise. The answers are kept across reads
   * while the pool reuses no code (see the top).
   */
  memo(path: ResolvedPath, evaluate: RowRead): RowRead {
    const column = this.columnOf(path)
    if (!(column instanceof CodeColumn)) return evaluate
    const pool = this.collection.pool
    // 0: not known yet, 1 true, 2 false, 3 null.
    let bytes = new Int8Array(0)
    let map: Map<number, number> | null = null
    let reuses = pool.reuses
    return (row, context) => {
      if (column.misfits?.has(row)) return evaluate(row, context)
      if (pool.reuses !== reuses) {
        bytes.fill(0)
        map = null
        reuses = pool.reuses
      }
      const code = column.code(row)
      const known = code < bytes.length ? (bytes[code] as number) : map === null ? 0 : (map.get(code) ?? 0)
      if (known !== 0) return known === 1 ? true : known === 2 ? false : null
      const value = evaluate(row, context)
      const answer = value === true ? 1 : value === false ? 2 : value === null ? 3 : 0
      if (answer === 0) return value
      if (code < MEMO_ARRAY_MAX) {
        if (code >= bytes.length) {
          const grown = new Int8Array(Math.min(MEMO_ARRAY_MAX, Math.max(64, 2 ** Math.ceil(Math.log2(code + 1)))))
          grown.set(bytes)
          bytes = grown
        }
        bytes[code] = answer
      } else {
        if (map === null || map.size >= MEMO_MAP_MAX) map = new Map()
        map.set(code, answer)
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
