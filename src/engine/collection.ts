/*
 * One resource's records in a tenant: rows of columns (columnTable.ts, with
 * its id → row index), a secondary index (value → rows) of the non-null
 * values of every indexed field of the declaration (null is the common case
 * of an optional reference, and an index of it would hold most of the
 * collection), and a day-bucketed range index for every range-indexed date
 * field. A declaration's `indexOrder` makes each value's rows of the
 * secondary indexes readable in that date's order (orderedRows.ts), from
 * either end (`orderedLookup`); otherwise they are kept ascending, which is
 * the collection's order.
 *
 * The indexes hold row numbers, and a record keeps its row for as long as
 * it lives: a put over an existing record changes only the indexes whose
 * value (or, kept in date order, whose date) changed, taking the row out
 * under its old value before the columns are written and putting it back
 * under the new one after.
 *
 * The domain reads records (`get`, `values`, `lookup`: made from their
 * rows); the query layer reads rows and columns (`rowOf`, `rows`,
 * `lookupRows`, `orderedRows`, DateBuckets.walkRows) and makes records only
 * of what it returns. Only TenantState calls put/remove, and only from
 * apply; and load/finishLoad, when a snapshot is loaded.
 */
import type { Rec, ResourceDecl } from '../domain/schema.js'
import { assertionFailed } from '../assert.js'
import { CodeColumn, NumberColumn, type Column } from './columns.js'
import { ColumnTable } from './columnTable.js'
import type { FrozenTable } from './frozenTable.js'
import type { LiveRows } from './liveRows.js'
import type { RecordMaker } from './recordMaker.js'
import { eachLiveRange, indexRowsSteps, keyOf } from './bulkIndexing.js'
import { DateBuckets } from './dateBuckets.js'
import { KeptRecords } from './keptRecords.js'
import { OrderedRows, type RowOrder } from './orderedRows.js'
import { PostingIndex, type RowKeySet } from './postingIndex.js'
import { RowSet } from './rowSet.js'
import { CHUNK_BITS } from './rowChunks.js'
import { runNow, type Steps } from './steps.js'
import { StringPool } from './stringPool.js'
import type { TableImage } from './tableImage.js'

/** Loaded records one step of finishLoadSteps adds to one index, or restoreSteps indexes by id: a chunk of rows (rowChunks.ts), about a millisecond (steps.ts). */
export const INDEX_STEP_RECORDS = 4096

interface Indexed {
  readonly name: string
  readonly column: CodeColumn
  readonly index: PostingIndex<RowKeySet>
}

export class Collection {
  readonly table: ColumnTable
  private readonly indexes = new Map<string, Indexed>()
  readonly rangeIndexes = new Map<string, DateBuckets>()
  /** Records made for reads by id and of pages, until their row changes (keptRecords.ts). */
  private readonly kept: KeptRecords
  /** Moves at every change of the collection's records (what a scan remembered of a row holds until it moves). */
  version = 0
  /** Rows loaded (load) and not yet indexed (finishLoad): those from this one on; -1 when none. */
  private loadingFrom = -1
  /** The date column of the declaration's indexOrder, when it has one. */
  private readonly orderColumn: NumberColumn | null
  /** Reference fields and the type each refers to. */
  readonly references: readonly (readonly [string, string])[]
  /** Stored text fields, the id among them. */
  readonly texts: readonly string[]

  /** `indexStepRecords` other than the default is for tests (many steps from few records); `pool` is the tenant's. */
  constructor(
    readonly decl: ResourceDecl,
    private readonly indexStepRecords = INDEX_STEP_RECORDS,
    readonly pool = new StringPool(),
  ) {
    this.table = new ColumnTable(decl, pool)
    this.kept = new KeptRecords(this.table)
    this.references = decl.fields.filter((fieldDecl) => fieldDecl.ref !== undefined).map((fieldDecl) => [fieldDecl.name, fieldDecl.ref as string] as const)
    this.texts = decl.fields.filter((fieldDecl) => fieldDecl.type === 'String' && !fieldDecl.computed).map((fieldDecl) => fieldDecl.name)
    const orderColumn = decl.indexOrder === null ? undefined : this.table.column(decl.indexOrder)
    if (orderColumn !== undefined && !(orderColumn instanceof NumberColumn)) assertionFailed(`${decl.type}: its index order ${decl.indexOrder} is not kept as numbers`)
    this.orderColumn = orderColumn ?? null
    const order: RowOrder | null =
      orderColumn === undefined
        ? null
        : {
            date: (row) => orderColumn.number(row) ?? Number.NEGATIVE_INFINITY,
            compareIds: (a, b) => this.table.ids.compare(a, b),
          }
    const newSet = (): RowKeySet => (order === null ? new RowSet() : new OrderedRows(order))
    for (const fieldDecl of decl.fields) {
      if (fieldDecl.computed) continue
      const column = this.table.column(fieldDecl.name)
      if (fieldDecl.indexed) {
        if (!(column instanceof CodeColumn)) assertionFailed(`${decl.type}.${fieldDecl.name}: an indexed field must be a text or a reference`)
        this.indexes.set(fieldDecl.name, { name: fieldDecl.name, column, index: new PostingIndex(newSet) })
      }
      if (fieldDecl.rangeIndexed) {
        if (!(column instanceof NumberColumn)) assertionFailed(`${decl.type}.${fieldDecl.name}: a range-indexed field must be a date`)
        this.rangeIndexes.set(fieldDecl.name, new DateBuckets(fieldDecl.name, (row) => column.number(row), this.table.record))
      }
    }
  }

  get size(): number {
    return this.table.size
  }

  get(id: string): Rec | undefined {
    return this.kept.byId(id)
  }

  /** The collection changes at `row` (-1: a new row) and, for a read by id, at `id` (keptRecords.ts). */
  private changed(row = -1, id?: string): void {
    this.version += 1
    this.kept.changed(row, id)
  }

  /** The row of the record with this id; -1 when there is none. */
  rowOf(id: string): number {
    return this.table.rowOf(id)
  }

  /** The record at a live row (kept until the next change: `kept`). */
  record(row: number): Rec {
    return this.kept.atRow(row)
  }

  /** The column of a stored field (undefined for one the records do not have). */
  column(name: string): Column | undefined {
    return this.table.column(name)
  }

  /**
   * Inserts a record of a snapshot being loaded. It is in the table at
   * once; the secondary and range indexes get the loaded rows in one go at
   * finishLoad, which must come before any other use.
   */
  load(rec: Rec): void {
    if (!this.loadNew(rec)) assertionFailed(`${this.decl.type} ${rec.id} loaded twice`)
  }

  /**
   * Takes a snapshot's columns (tableImage.ts) into this empty collection as they are, as steps
   * (ColumnTable.restoreSteps); the secondary and range indexes get its rows at finishLoad, as a load's.
   */
  *restoreSteps(image: TableImage): Steps<void> {
    this.changed()
    yield* this.table.restoreSteps(image, this.indexStepRecords)
    if (this.table.rowCount > 0) this.loadingFrom = 0
  }

  /** Loads a record as `load` does when its id is new (replaying the log: TenantState.applyEntry); false, and nothing changed, when the id is there. */
  loadNew(rec: Rec): boolean {
    this.changed()
    const row = this.table.insertNew(rec)
    if (row < 0) return false
    if (this.loadingFrom < 0) this.loadingFrom = row
    return true
  }

  /**
   * loadNew for a record logged as field names and values (ColumnTable.insertNewFields), without making it: its
   * row; -1, and nothing changed, when the id is there; NOT_AS_FIELDS when the record has to be made (recordFromFields) and loaded by loadNew.
   */
  loadNewFields(names: readonly string[], values: readonly unknown[]): number {
    this.changed()
    const row = this.table.insertNewFields(names, values)
    if (row >= 0 && this.loadingFrom < 0) this.loadingFrom = row
    return row
  }

  /** Indexes the records loaded since the last finishLoad. */
  finishLoad(): void {
    runNow(this.finishLoadSteps())
  }

  /**
   * finishLoad as steps: each adds at most indexStepRecords of the loaded
   * rows to one index (a million time records took 140–170 ms an index in
   * one step, the longest hold of the event loop while a tenant loaded).
   */
  *finishLoadSteps(): Steps<void> {
    const from = this.loadingFrom
    if (from < 0) return
    const to = this.table.rowCount
    for (const { column, index } of this.indexes.values()) yield* indexRowsSteps(this.table, column, index, from, to, this.indexStepRecords)
    if (this.rangeIndexes.size > 0) {
      const rows = new Int32Array(to - from)
      let listed = 0
      yield* eachLiveRange(this.table, from, to, this.indexStepRecords, (chunk, flags, start, end) => {
        const first = chunk << CHUNK_BITS
        for (let offset = start; offset < end; offset += 1) {
          if (flags[offset] !== 1) continue
          rows[listed] = first + offset
          listed += 1
        }
      })
      for (const buckets of this.rangeIndexes.values()) yield* buckets.addAllSteps(rows.subarray(0, listed), this.indexStepRecords)
    }
    this.loadingFrom = -1
  }

  /**
   * After a snapshot's records are indexed (finishLoadSteps), gives back the
   * room the indexes' arrays took beyond their rows while they grew. An
   * index a step. Not after a replay: a log of changes would copy a key's
   * rows at each finishLoad.
   */
  *trimSteps(): Steps<void> {
    if (this.table.size === 0) return
    for (const indexed of this.indexes.values()) {
      indexed.index.trim()
      yield
    }
    for (const buckets of this.rangeIndexes.values()) {
      buckets.trim()
      yield
    }
  }

  private assertIndexed(use: string): void {
    if (this.loadingFrom >= 0) assertionFailed(`${this.decl.type}: ${use} before the loaded records were indexed`)
  }

  /** Inserts or replaces; returns the record it replaced. */
  put(rec: Rec): Rec | undefined {
    this.assertIndexed('put')
    const row = this.table.rowOf(rec.id)
    if (row < 0) {
      this.changed()
      const added = this.table.insert(rec)
      this.addToIndexes(added)
      return undefined
    }
    const before = this.kept.current(row)
    this.changed(row, rec.id)
    const orderMoves = this.orderColumn !== null && this.orderColumn.number(row) !== numberOrNull(rec[this.decl.indexOrder as string])
    const moved: Indexed[] = []
    for (const indexed of this.indexes.values()) {
      const oldValue = before[indexed.name] ?? null
      const newValue = rec[indexed.name] ?? null
      if (oldValue === newValue && !orderMoves) continue
      const key = keyOf(indexed.column, row)
      if (key !== null) indexed.index.remove(key.code, key.misfit, row)
      moved.push(indexed)
    }
    const movedBuckets: DateBuckets[] = []
    for (const buckets of this.rangeIndexes.values()) {
      if (!DateBuckets.moves(numberOrNull(before[buckets.field]), numberOrNull(rec[buckets.field]))) continue
      buckets.remove(row)
      movedBuckets.push(buckets)
    }
    this.table.update(row, rec)
    for (const indexed of moved) {
      const key = keyOf(indexed.column, row)
      if (key !== null) indexed.index.add(key.code, key.misfit, row)
    }
    for (const buckets of movedBuckets) buckets.add(row)
    return before
  }

  private addToIndexes(row: number): void {
    for (const { column, index } of this.indexes.values()) {
      const key = keyOf(column, row)
      if (key !== null) index.add(key.code, key.misfit, row)
    }
    for (const buckets of this.rangeIndexes.values()) buckets.add(row)
  }

  remove(id: string): Rec | undefined {
    this.assertIndexed('remove')
    const row = this.table.rowOf(id)
    if (row < 0) return undefined
    const before = this.kept.current(row)
    this.changed(row, id)
    for (const { column, index } of this.indexes.values()) {
      const key = keyOf(column, row)
      if (key !== null) index.remove(key.code, key.misfit, row)
    }
    for (const buckets of this.rangeIndexes.values()) buckets.remove(row)
    this.table.remove(row)
    return before
  }

  hasIndex(fieldName: string): boolean {
    return this.indexes.has(fieldName)
  }

  /** The index key of a value: its pool code (0 with the value itself when it is no text); null when no record can hold it. */
  private keyOfValue(value: unknown): { code: number; misfit: unknown } | null {
    if (typeof value !== 'string') return { code: 0, misfit: value }
    const code = this.pool.codeOf(value)
    return code === 0 ? null : { code, misfit: null }
  }

  private indexOf(fieldName: string): Indexed {
    const indexed = this.indexes.get(fieldName)
    if (indexed === undefined) assertionFailed(`${this.decl.type}.${fieldName} has no index`)
    return indexed
  }

  /** Rows whose indexed field equals the (non-null) value; not to be changed while read. */
  lookupRows(fieldName: string, value: unknown): IterableIterator<number> {
    this.assertIndexed('lookup')
    const indexed = this.indexOf(fieldName)
    const key = this.keyOfValue(value)
    return (key === null ? undefined : indexed.index.setOf(key.code, key.misfit)?.values()) ?? NO_ROWS.values()
  }

  /** Records whose indexed field equals the value (null matches a missing value, by a scan); not to be changed while read. */
  lookup(fieldName: string, value: unknown): Iterable<Rec> {
    this.assertIndexed('lookup')
    this.indexOf(fieldName)
    if (value === null || value === undefined) return this.withoutValue(fieldName)
    return this.recordsOf(this.lookupRows(fieldName, value))
  }

  /**
   * The rows whose indexed field equals the (non-null) value, in the order
   * of `$orderby=<orderField>` (descending with `desc`), or null when that
   * index does not keep its rows in that order (or has too many of them to
   * put in order now: OrderedRows.inOrder).
   */
  orderedRows(fieldName: string, value: unknown, orderField: string, descending: boolean): IterableIterator<number> | null {
    this.assertIndexed('orderedLookup')
    if (this.decl.indexOrder !== orderField || value === null || value === undefined) return null
    const indexed = this.indexes.get(fieldName)
    if (indexed === undefined) return null
    const key = this.keyOfValue(value)
    const set = key === null ? undefined : indexed.index.setOf(key.code, key.misfit)
    if (set === undefined) return NO_ROWS.values()
    if (!(set instanceof OrderedRows)) assertionFailed(`${this.decl.type}.${fieldName}: an index of a collection with an index order keeps rows without it`)
    return set.inOrder(descending)
  }

  /** orderedRows' records. */
  orderedLookup(fieldName: string, value: unknown, orderField: string, descending: boolean): Iterable<Rec> | null {
    const rows = this.orderedRows(fieldName, value, orderField, descending)
    return rows === null ? null : this.recordsOf(rows)
  }

  private *withoutValue(fieldName: string): IterableIterator<Rec> {
    const column = this.table.column(fieldName) as Column
    for (const row of this.table.rows()) if ((column.get(row) ?? null) === null) yield this.table.record(row)
  }

  /** How many records a lookup visits: the index entry, or the whole collection for null. */
  countOf(fieldName: string, value: unknown): number {
    if (value === null || value === undefined) return this.table.size
    const indexed = this.indexes.get(fieldName)
    const key = this.keyOfValue(value)
    return indexed === undefined || key === null ? 0 : indexed.index.count(key.code, key.misfit)
  }

  /** The records as they are now, unchanged by later writes until released (columnTable.ts). */
  frozen(): FrozenTable {
    this.assertIndexed('frozen')
    return this.table.frozen()
  }

  /** The live rows, in the collection's order. */
  rows(): LiveRows {
    return this.table.rows()
  }

  values(): IterableIterator<Rec> {
    return this.recordsOf(this.table.rows())
  }

  /** The records of `rows`, made as they are reached. */
  recordsOf(rows: Iterator<number>): IterableIterator<Rec> {
    return new RecordWalk(rows, this.table.record)
  }
}

const NO_ROWS = new Int32Array(0)

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null
}

/** Records made from rows as an iterator object (see rowSet.ts RowWalk). */
class RecordWalk implements IterableIterator<Rec> {
  constructor(
    private readonly rows: Iterator<number>,
    private readonly record: RecordMaker,
  ) {}

  [Symbol.iterator](): IterableIterator<Rec> {
    return this
  }

  next(): IteratorResult<Rec> {
    const next = this.rows.next()
    return next.done === true ? { done: true, value: undefined } : { done: false, value: this.record(next.value) }
  }
}
