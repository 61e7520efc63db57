/*
 * A collection's records as rows of columns (design §11): a column per
 * field of the declaration's records (columns.ts; the id: idColumn.ts),
 * rows numbered as they are appended, an id → row index (rowIndex.ts), and
 * a flag per row saying whether it is live.
 *
 * The domain still sees `Rec`: a read of one record, each record of a page
 * and a write's before-image are made from the row on demand (`record`) by
 * a function generated once per declaration, an object literal with the
 * record's fields in their order (recordMaking.ts recordFieldNames), so every
 * record of a resource has one shape (hidden class) and is built in one
 * allocation. A write takes a `Rec` and stores each field in its column.
 *
 * A row keeps its number for as long as its record lives: an update writes
 * the row's columns over, so an index that holds the row (postingIndex.ts,
 * dateBuckets.ts) changes only where an indexed value changed. A removed
 * row stays a hole (its number is never given to another record; a walk
 * skips it), so the rows in order are the records in the order they were
 * added, live and after a load alike. A chunk whose rows are all removed
 * gives back its arrays.
 *
 * What a record holds beyond its declaration's fields (a field no longer
 * declared, in data written before), and a declared field it lacks, are
 * kept per row in the `extras` column and put back when the record is
 * made: a record comes back as it was put (its fields in the
 * declaration's order, then the others in theirs).
 *
 * `freeze` gives a FrozenTable: the rows and columns as they are at that
 * moment, unchanged by later writes (rowChunks.ts), for a snapshot written
 * a slice per event-loop turn while the tenant goes on.
 */
import { assert, assertionFailed } from '../assert.js'
import { recordFieldDefault, recordFieldNames } from '../domain/recordMaking.js'
import type { Rec, ResourceDecl } from '../domain/schema.js'
import { CodeColumn, NumberColumn, type Column } from './columns.js'
import { FlagColumn } from './flagColumn.js'
import { IdColumn } from './idColumn.js'
import { columnKindOf, makerOf, type ColumnKind, type RecordMaker } from './recordMaker.js'
import { ABSENT, extrasChunksOfStored, storedExtrasChunks, type Extras } from './rowExtras.js'
import { CHUNK_BITS, CHUNK_MASK, CHUNK_ROWS, FreezeState } from './rowChunks.js'
import { RowIndex } from './rowIndex.js'
import type { Steps } from './steps.js'
import type { StringPool } from './stringPool.js'
import { checkChunks, type ColumnChunks, type TableImage } from './tableImage.js'
import { ValueColumn } from './valueColumn.js'
import { FieldsPlans, NOT_AS_FIELDS } from './fieldsPlans.js'
import { FrozenTable } from './frozenTable.js'
import { LiveRows } from './liveRows.js'

/** A column takes its chunks from a snapshot (tableImage.ts); the kinds were checked (fitsImage). */
function adoptInto(column: Column, chunks: ColumnChunks): void {
  if (chunks.kind === 'id') (column as unknown as IdColumn).adopt(chunks)
  else if (chunks.kind === 'number') (column as NumberColumn).adopt(chunks)
  else if (chunks.kind === 'code') (column as CodeColumn).adopt(chunks)
  else if (chunks.kind === 'flag') (column as FlagColumn).adopt(chunks)
  else (column as ValueColumn).adopt(chunks)
}

/** The hash seed of every table's row index in this process (idColumn.ts says why it is random). */
const HASH_SEED = (Math.random() * 2 ** 32) | 0

export class ColumnTable {
  readonly freeze = new FreezeState()
  readonly ids: IdColumn
  private readonly index: RowIndex
  /** The record's fields, in order, and their columns (the id's is `ids`). */
  readonly names: readonly string[]
  readonly columns: readonly Column[]
  private readonly kinds: readonly ColumnKind[]
  private readonly columnAt = new Map<string, number>()
  private readonly idAt: number
  private readonly extras: ValueColumn
  /** Per column: what a new record holds there (recordFieldDefault). */
  private readonly defaults: readonly unknown[]
  /** The columns of each kind but the id, in the fields' order, and where each is among `columns` (insertNewFields). */
  private readonly byKind: readonly (readonly [Int32Array, readonly Column[]])[]
  /** How a logged put's fields go into the columns (fieldsPlans.ts). */
  private readonly plans: FieldsPlans
  /** Per chunk: 1 for a live row, 0 for a removed one (null: a chunk whose rows are all removed). */
  private readonly alive: (Uint8Array | null)[] = []
  private readonly aliveCopiedAt: number[] = []
  private readonly liveInChunk: number[] = []
  /** Rows appended so far, live or removed. */
  rowCount = 0
  private live = 0
  readonly record: RecordMaker

  /** `seed` and `shardedFrom` other than the defaults are for tests. */
  constructor(
    readonly decl: ResourceDecl,
    readonly pool: StringPool,
    seed = HASH_SEED,
    shardedFrom?: number,
  ) {
    this.ids = new IdColumn(seed)
    this.index = new RowIndex(this.ids, shardedFrom)
    this.names = recordFieldNames(decl)
    this.idAt = this.names.indexOf('id')
    if (this.idAt < 0) assertionFailed(`${decl.type}: its records have no id`)
    this.kinds = this.names.map((name) => columnKindOf(decl, name))
    this.columns = this.names.map((name, at) => {
      this.columnAt.set(name, at)
      const kind = columnKindOf(decl, name)
      if (kind === 'id') return this.ids as unknown as Column
      if (kind === 'number') return new NumberColumn(this.freeze)
      if (kind === 'code') return new CodeColumn(this.freeze, pool)
      if (kind === 'flag') return new FlagColumn(this.freeze)
      return new ValueColumn(this.freeze)
    })
    this.extras = new ValueColumn(this.freeze)
    this.plans = new FieldsPlans(this.columnAt)
    this.defaults = this.names.map((name) => recordFieldDefault(decl, name))
    this.byKind = (['number', 'code', 'flag', 'value'] as const).map((kind) => {
      const ats = this.kinds.flatMap((held, at) => (held === kind ? [at] : []))
      return [Int32Array.from(ats), ats.map((at) => this.columns[at] as Column)] as const
    })
    this.record = makerOf(decl, this.names)(this.columns, this.extras, pool)
  }

  /** Live rows. */
  get size(): number {
    return this.live
  }

  /** The column of a field of the records (undefined for a field they do not have; the id's is `ids`). */
  column(name: string): Column | undefined {
    const at = this.columnAt.get(name)
    return at === undefined ? undefined : this.columns[at]
  }

  /** The row of the record with this id; -1 when there is none. */
  rowOf(id: string): number {
    return this.index.rowOf(id)
  }

  /** The live flags of a chunk's rows (1 live, 0 removed; null: none of its rows is live), for a scan of every row (query/blockScan.ts, the loads' bulk passes). Read only. */
  liveFlags(chunk: number): Uint8Array | null {
    return this.alive[chunk] ?? null
  }

  isLive(row: number): boolean {
    return this.alive[row >>> CHUNK_BITS]?.[row & CHUNK_MASK] === 1
  }

  /** Appends a record whose id the table does not hold; its row. */
  insert(rec: Rec): number {
    const row = this.insertNew(rec)
    if (row < 0) assertionFailed(`${this.decl.type}: ${rec.id} inserted twice`)
    return row
  }

  /** Appends a record when its id is new (one probe of the index): its row; -1, and nothing changed, when the id is there. */
  insertNew(rec: Rec): number {
    const row = this.appendId(rec.id)
    if (row < 0) return row
    this.write(row, rec, true)
    this.assertIndexedLive()
    return row
  }

  /**
   * insertNew for a record logged as its field names and values (codec.ts), written to the columns as
   * recordFromFields would make it, without making it: its row; -1, and nothing changed, when the id is there;
   * NOT_AS_FIELDS, and nothing changed, when the entry's fields are not the declaration's own (FieldsPlan).
   */
  insertNewFields(names: readonly string[], values: readonly unknown[]): number {
    const plan = this.plans.of(names)
    if (plan === null) return NOT_AS_FIELDS
    const idAt = plan[this.idAt] as number
    const row = this.appendId(idAt < 0 ? this.defaults[this.idAt] : values[idAt])
    if (row < 0) return row
    const { defaults } = this
    // A loop per kind of column: each call site sees one class (a loop over all columns calls five, and V8 looks each call up).
    // Only code columns take texts from the pool, in the order of the fields, as `write` takes them.
    for (const [ats, columns] of this.byKind) {
      for (let index = 0; index < ats.length; index += 1) {
        const at = ats[index] as number
        const position = plan[at] as number
        ;(columns[index] as Column).write(row, position < 0 ? defaults[at] : values[position], true)
      }
    }
    this.extras.write(row, null, true)
    this.assertIndexedLive()
    return row
  }

  /** Appends a row for `id` when no row holds it (the id column and index only): the row; -1, and nothing changed, when the id is held. */
  private appendId(id: unknown): number {
    if (typeof id !== 'string') assertionFailed(`${this.decl.type}: a record's id must be a string, not ${typeof id}`)
    const row = this.rowCount
    if (row >= 2 ** 31 - 1) assertionFailed(`${this.decl.type}: no row numbers left`)
    const chunk = row >>> CHUNK_BITS
    if (chunk === this.alive.length) {
      this.alive.push(new Uint8Array(CHUNK_ROWS))
      this.aliveCopiedAt.push(this.freeze.epoch)
      this.liveInChunk.push(0)
    }
    ;(this.alive[chunk] as Uint8Array)[row & CHUNK_MASK] = 1
    this.liveInChunk[chunk] = (this.liveInChunk[chunk] as number) + 1
    this.ids.write(row, id)
    if (!this.index.addNew(row)) {
      ;(this.alive[chunk] as Uint8Array)[row & CHUNK_MASK] = 0
      this.liveInChunk[chunk] = (this.liveInChunk[chunk] as number) - 1
      return -1
    }
    this.rowCount = row + 1
    this.live += 1
    return row
  }

  private assertIndexedLive(): void {
    if (this.index.size !== this.live) assertionFailed(`${this.decl.type}: ${this.index.size} ids indexed, ${this.live} live rows`)
  }

  /** Writes a new version of the record at `row` (the same id) over it. */
  update(row: number, rec: Rec): void {
    if (!this.isLive(row)) assertionFailed(`${this.decl.type}: ${rec.id} written over row ${row}, which holds no record`)
    this.write(row, rec, false)
  }

  /** Removes the record at `row` (its id leaves the index; the row stays a hole). */
  remove(row: number): void {
    if (!this.isLive(row)) assertionFailed(`${this.decl.type}: row ${row} removed, which holds no record`)
    const chunk = row >>> CHUNK_BITS
    const id = this.ids.get(row)
    if (this.index.delete(id) !== row) assertionFailed(`${this.decl.type}: ${id} is not indexed at its row`)
    for (let at = 0; at < this.columns.length; at += 1) if (at !== this.idAt) (this.columns[at] as Column).clear(row)
    this.extras.clear()
    let alive = this.alive[chunk] as Uint8Array
    if (row < this.freeze.frozenRows && this.aliveCopiedAt[chunk] !== this.freeze.epoch) {
      alive = alive.slice()
      this.alive[chunk] = alive
      this.aliveCopiedAt[chunk] = this.freeze.epoch
    }
    alive[row & CHUNK_MASK] = 0
    this.live -= 1
    this.assertIndexedLive()
    const left = (this.liveInChunk[chunk] as number) - 1
    if (left < 0) assertionFailed(`${this.decl.type}: chunk ${chunk} counts fewer than no live rows`)
    this.liveInChunk[chunk] = left
    // A full chunk with no live row left: its arrays go (frozen views keep their own lists of them).
    if (left === 0 && (chunk + 1) * CHUNK_ROWS <= this.rowCount) {
      this.alive[chunk] = null
      for (let at = 0; at < this.columns.length; at += 1) if (at !== this.idAt) (this.columns[at] as Column).dropChunk(chunk)
      this.ids.dropChunk(chunk)
      this.extras.dropChunk(chunk)
    }
  }

  private write(row: number, rec: Rec, fresh: boolean): void {
    const { names, columns } = this
    const fields = rec as Record<string, unknown>
    let extras: Extras | null = null
    let present = 0
    for (let at = 0; at < names.length; at += 1) {
      const name = names[at] as string
      let value = fields[name]
      if (value === undefined && !(name in fields)) {
        extras ??= {}
        extras[name] = ABSENT
        value = null
      } else present += 1
      if (at !== this.idAt) (columns[at] as Column).write(row, value, fresh)
    }
    let keys = 0
    for (const _name in fields) keys += 1
    if (keys !== present) {
      for (const name in fields) {
        if (this.columnAt.has(name)) continue
        extras ??= {}
        extras[name] = fields[name]
      }
    }
    this.extras.write(row, extras, fresh)
  }

  /** The live rows in order. */
  rows(): LiveRows {
    return new LiveRows(this.alive, this.rowCount, 0)
  }

  /** The table as it is now, unchanged by later writes until `release` (see the top). */
  frozen(): FrozenTable {
    this.freeze.freeze(this.rowCount)
    this.pool.pin()
    const columns = this.columns.map((column, at) => (at === this.idAt ? this.ids.frozen() : column.frozen()))
    const extras = this.extras.frozen()
    const record = makerOf(this.decl, this.names)(columns, extras, this.pool)
    const alive = this.alive.slice()
    const { rowCount, names, kinds } = this
    const image = (): TableImage => ({
      type: this.decl.type,
      rowCount,
      names,
      columns: columns.map((view, at) => ({ kind: kinds[at], ...view }) as unknown as ColumnChunks),
      alive,
      extras: storedExtrasChunks({ kind: 'value', ...extras }),
    })
    return new FrozenTable(rowCount, this.live, alive, record, image, () => {
      this.freeze.release()
      this.pool.unpin()
    })
  }

  /**
   * Takes a snapshot's columns (tableImage.ts) into this empty table as they are, then counts the pool codes of its
   * live rows and indexes their ids, as steps of about `stepRows` rows (a chunk at least); an Error when the image
   * does not fit the table (fitsImage first) or its chunks are not whole. Nothing else may use the table before the
   * steps end.
   */
  *restoreSteps(image: TableImage, stepRows: number): Steps<void> {
    assert(this.rowCount === 0 && this.fitsImage(image), `${this.decl.type}: a snapshot's columns restored into a table that holds rows or other columns`)
    const chunks = Math.ceil(image.rowCount / CHUNK_ROWS)
    for (const [at, column] of image.columns.entries()) checkChunks(column, chunks, `${this.decl.type}.${this.names[at] as string}`)
    checkChunks(image.extras, chunks, `${this.decl.type} extras`)
    if (image.alive.length !== chunks || image.alive.some((flags) => flags !== null && flags.length !== CHUNK_ROWS))
      throw new Error(`${this.decl.type}: live flags of ${image.alive.length} chunks, ${chunks} expected`)
    const chunksPerStep = Math.max(1, Math.floor(stepRows / CHUNK_ROWS))
    yield
    for (const [chunk, flags] of image.alive.entries()) {
      // Rows appended after the snapshot was taken may have marked the last chunk's flags as it was written.
      if (flags !== null && (chunk + 1) * CHUNK_ROWS > image.rowCount) flags.fill(0, image.rowCount - chunk * CHUNK_ROWS)
      let live = 0
      if (flags !== null) for (let offset = 0; offset < CHUNK_ROWS; offset += 1) live += flags[offset] === 1 ? 1 : 0
      this.alive.push(flags)
      this.aliveCopiedAt.push(this.freeze.epoch)
      this.liveInChunk.push(live)
      this.live += live
      if ((chunk + 1) % chunksPerStep === 0) yield
    }
    for (const [at, column] of image.columns.entries()) adoptInto(this.columns[at] as Column, column)
    this.extras.adopt(extrasChunksOfStored(image.extras))
    this.rowCount = image.rowCount
    yield
    const codeColumns = image.columns.filter((column) => column.kind === 'code')
    const liveRows = new Int32Array(this.live)
    let listed = 0
    for (const [chunk, flags] of image.alive.entries()) {
      if (flags !== null) {
        for (const column of codeColumns) this.pool.countChunk(column.arrays[chunk] ?? column.constants[chunk] ?? 0, flags)
        for (let offset = 0; offset < CHUNK_ROWS; offset += 1) {
          if (flags[offset] === 1) {
            liveRows[listed] = chunk * CHUNK_ROWS + offset
            listed += 1
          }
        }
      }
      if ((chunk + 1) % chunksPerStep === 0) yield
    }
    const held = yield* this.index.addAllSteps(liveRows, stepRows)
    if (held >= 0) throw new Error(`${this.decl.type}: the id of row ${held} is held by another row`)
    assert(this.index.size === this.live, `${this.decl.type}: ${this.index.size} ids indexed, ${this.live} live rows`)
  }

  /** Whether no row of the chunk has extras (then none lacks a declared field: `lacks`); false when some may. */
  noExtrasIn(chunk: number): boolean {
    return (this.extras.arrays[chunk] ?? null) === null && this.extras.get(chunk << CHUNK_BITS) === null
  }

  /** Whether the record at `row` holds more or less than its declaration's fields (rowExtras.ts): made, it is not its columns alone. */
  hasExtras(row: number): boolean {
    return this.extras.get(row) !== null
  }

  /** Whether the record at `row` lacks the declared field `name` (its extras say so: rowExtras.ts). */
  lacks(row: number, name: string): boolean {
    const extras = this.extras.get(row)
    return extras !== null && typeof extras === 'object' && (extras as Extras)[name] === ABSENT
  }

  /** Whether a snapshot's columns are this table's: the same fields, each in a column of the same kind. */
  fitsImage(image: TableImage): boolean {
    return image.names.length === this.names.length && image.names.every((name, at) => name === this.names[at] && image.columns[at]?.kind === this.kinds[at])
  }

  /** Bytes the table's typed arrays hold (columns, live flags, the id index): memory outside V8's heap. */
  arrayBytes(): number {
    let bytes = this.ids.arrayBytes() + this.index.arrayBytes() + this.extras.arrayBytes()
    for (const [at, column] of this.columns.entries()) if (at !== this.idAt) bytes += column.arrayBytes()
    for (const alive of this.alive) bytes += alive?.byteLength ?? 0
    return bytes
  }
}
