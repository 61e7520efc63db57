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
/** A memo's answer true, false (CodeMemo.bytes). */
export const MEMO_TRUE = 1
const MEMO_FALSE = 2

/** A value of the row at `row` (the scan's subject). */
export type RowRead = (row: number, context: DisplayContext) => unknown

/** One top-level `and` part of a compiled `$filter` over rows (filterCompiler.ts bindRows). */
export interface RowFilterPart {
  test(row: number, context: DisplayContext): boolean
  /** The part's answers by the code of the one text or reference column it depends on (the row passes on MEMO_TRUE), when it has them. */
  byCode: CodeMemo | null
}

/** A compiled `$filter` over the rows of one collection: `test`, which is every part's. */
export interface RowFilter {
  test(row: number, context: DisplayContext): boolean
  parts: readonly RowFilterPart[]
}

const bindings = new WeakMap<Collection, RowBinding>()
/** The memo behind a reader RowBinding.memo made. */
const memos = new WeakMap<RowRead, CodeMemo>()

/** What a block scan needs of a memoized reader: its answers by code (RowBinding.memo), or null when it has none. */
export function codeMemoOf(read: RowRead): CodeMemo | null {
  return memos.get(read) ?? null
}

/** Answers of a computation over one text or reference column, by pool code (RowBinding.memo; see the top). */
export class CodeMemo {
  /** By code below MEMO_ARRAY_MAX: 0 not known yet, MEMO_TRUE, MEMO_FALSE or 3 (null). Replaced when it grows. */
  bytes = new Int8Array(0)
  private map: Map<number, number> | null = null
  private reuses: number

  constructor(
    readonly column: CodeColumn,
    /** The computation, at a row. */
    readonly evaluate: RowRead,
  ) {
    this.reuses = column.pool.reuses
  }

  /** Forgets every answer when the pool has given a freed code to another text since they were found. */
  check(): void {
    const reuses = this.column.pool.reuses
    if (reuses !== this.reuses) {
      this.bytes.fill(0)
      this.map = null
      this.reuses = reuses
    }
  }

  /** `evaluate` at `row`, from the answer of its code when known. */
  read(row: number, context: DisplayContext): unknown {
    const column = this.column
    if (column.misfits?.has(row)) return this.evaluate(row, context)
    this.check()
    const code = column.code(row)
    const bytes = this.bytes
    const known = code < bytes.length ? (bytes[code] as number) : this.map === null ? 0 : (this.map.get(code) ?? 0)
    if (known !== 0) return known === MEMO_TRUE ? true : known === MEMO_FALSE ? false : null
    return this.learn(code, this.evaluate(row, context))
  }

  /** Keeps `value` as the answer of `code` (when a boolean or null); `value`. */
  private learn(code: number, value: unknown): unknown {
    const answer = value === true ? MEMO_TRUE : value === false ? MEMO_FALSE : value === null ? 3 : 0
    if (answer === 0) return value
    if (code < MEMO_ARRAY_MAX) {
      if (code >= this.bytes.length) {
        const grown = new Int8Array(Math.min(MEMO_ARRAY_MAX, Math.max(64, 2 ** Math.ceil(Math.log2(code + 1)))))
        grown.set(this.bytes)
        this.bytes = grown
      }
      this.bytes[code] = answer
    } else {
      if (this.map === null || this.map.size >= MEMO_MAP_MAX) this.map = new Map()
      this.map.set(code, answer)
    }
    return value
  }
}

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
   * while the pool reuses no code (see the top). A block scan reads the answers directly (`codeMemoOf`).
   */
  memo(path: ResolvedPath, evaluate: RowRead): RowRead {
    const column = this.columnOf(path)
    if (!(column instanceof CodeColumn)) return evaluate
    const memo = new CodeMemo(column, evaluate)
    const read: RowRead = (row, context) => memo.read(row, context)
    memos.set(read, memo)
    return read
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
