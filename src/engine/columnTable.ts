/*
 * A collection's records as rows of columns (design §11): a column per
 * field of the declaration's records (columns.ts; the id: idColumn.ts),
 * rows numbered as they are appended, an id → row index (rowIndex.ts), and
 * a flag per row saying whether it is live.
 *
 * The domain still sees `Rec`: a read of one record, each record of a page
 * and a write's before-image are made from the row on demand (`record`) by
 * a function generated once per declaration, an object literal with the
 * record's fields in their order (records.ts recordFieldNames), so every
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
import { assertionFailed } from '../assert.js'
import { recordFieldNames } from '../domain/records.js'
import type { Rec, ResourceDecl } from '../domain/schema.js'
import { CodeColumn, FLAG_NULL, FLAG_TRUE, FlagColumn, INT_NULL, NumberColumn, ValueColumn, type CodeView, type Column, type ColumnReader, type FlagView, type NumberView, type ValueView } from './columns.js'
import { formatUuid, IdColumn, type IdView } from './idColumn.js'
import { CHUNK_BITS, CHUNK_MASK, CHUNK_ROWS, FreezeState } from './rowChunks.js'
import { RowIndex } from './rowIndex.js'
import type { StringPool } from './stringPool.js'

export type ColumnKind = 'id' | 'number' | 'code' | 'flag' | 'value'

/** The column a field of the declaration's records is kept in. */
export function columnKindOf(decl: ResourceDecl, name: string): ColumnKind {
  if (name === 'id') return 'id'
  const field = decl.fieldsByName.get(name)
  // Fields every record has without declaring them: version and the dates are numbers, trashItem a reference.
  if (field === undefined) return name === 'trashItem' ? 'code' : 'number'
  if (field.list) return 'value'
  if (field.ref !== undefined || field.type === 'String') return 'code'
  if (field.type === 'Boolean') return 'flag'
  if (field.type === 'Long' || field.type === 'Integer' || field.type === 'Double' || field.type === 'Date') return 'number'
  return 'value'
}

/** In a row's extras: a declared field the record lacks. */
const ABSENT = Symbol('absent')

type Extras = Record<string, unknown>

function addExtras(rec: Record<string, unknown>, extras: Extras): void {
  for (const name in extras) {
    const value = extras[name]
    if (value === ABSENT) delete rec[name]
    else rec[name] = value
  }
}

type Maker = (columns: readonly ColumnReader[], extras: ValueView, pool: StringPool) => RecordMaker

/** Makes the record at a row; `knownId` is its id when the caller has it (a read by id), so it is not formatted again. */
export type RecordMaker = (row: number, knownId?: string) => Rec

/** The code that reads field `at` of kind `kind` into `v<at>` (`chunk` and `at` of the row known), and the values it needs. */
function fieldReader(kind: ColumnKind, at: number, column: ColumnReader): { code: string; names: string[]; values: unknown[] } {
  const v = `v${at}`
  const misfit = (rest: string) => `{ const m = C${at}.misfits; if (m !== null && m.has(row)) ${v} = m.get(row); else { ${rest} } }`
  switch (kind) {
    case 'id': {
      const ids = column as IdView
      return {
        code: `let ${v} = knownId; if (${v} === undefined) { const o = O${at}[chunk]; if (o !== null) ${v} = o.get(offset); if (${v} === undefined) ${v} = formatUuid(W${at}[chunk], offset * 4) }`,
        names: [`W${at}`, `O${at}`],
        values: [ids.words, ids.others],
      }
    }
    case 'number': {
      const numbers = column as NumberView
      return {
        code: `let ${v}; ${misfit(`const f = F${at}[chunk]; if (f !== null) { const x = f[offset]; ${v} = x === x ? x : null } else { const n = I${at}[chunk]; if (n !== null) { const x = n[offset]; ${v} = x === ${INT_NULL} ? null : x } else ${v} = K${at}[chunk] ?? null }`)}`,
        names: [`C${at}`, `F${at}`, `I${at}`, `K${at}`],
        values: [numbers, numbers.floats, numbers.ints, numbers.constants],
      }
    }
    case 'code': {
      const codes = column as CodeView
      return {
        code: `let ${v}; ${misfit(`const a = A${at}[chunk]; const c = a !== null ? a[offset] : K${at}[chunk]; ${v} = c === 0 ? null : T[c - 1]`)}`,
        names: [`C${at}`, `A${at}`, `K${at}`],
        values: [codes, codes.arrays, codes.constants],
      }
    }
    case 'flag': {
      const flags = column as FlagView
      return {
        code: `let ${v}; ${misfit(`const a = A${at}[chunk]; const f = a !== null ? a[offset] : K${at}[chunk]; ${v} = f === ${FLAG_NULL} ? null : f === ${FLAG_TRUE}`)}`,
        names: [`C${at}`, `A${at}`, `K${at}`],
        values: [flags, flags.arrays, flags.constants],
      }
    }
    case 'value': {
      const values = column as ValueView
      return { code: `const a${at} = A${at}[chunk]; const ${v} = a${at} !== null ? a${at}[offset] : K${at}[chunk]`, names: [`A${at}`, `K${at}`], values: [values.arrays, values.constants] }
    }
  }
}

const makers = new WeakMap<ResourceDecl, Maker>()

/**
 * The generated maker of a declaration's records from a set of columns (see
 * the top): `new Function` over the field names (each a JSON string
 * literal), reading each column's chunk arrays directly: the chunk and the
 * offset of the row are worked out once, and no column method is called.
 */
function makerOf(decl: ResourceDecl, names: readonly string[]): Maker {
  let maker = makers.get(decl)
  if (maker === undefined) {
    const kinds = names.map((name) => columnKindOf(decl, name))
    maker = (columns, extras, pool) => {
      const readers = kinds.map((kind, at) => fieldReader(kind, at, columns[at] as ColumnReader))
      const fields = names.map((name, at) => `${JSON.stringify(name)}: v${at}`).join(', ')
      const body = [
        'return function record(row, knownId) {',
        `  const chunk = row >>> ${CHUNK_BITS}, offset = row & ${CHUNK_MASK};`,
        ...readers.map((reader) => `  ${reader.code};`),
        `  const rec = { ${fields} };`,
        '  const xa = EA[chunk]; const extra = xa !== null ? xa[offset] : EK[chunk];',
        '  if (extra !== null) addExtras(rec, extra);',
        '  return rec;',
        '}',
      ].join('\n')
      const parameters = ['EA', 'EK', 'T', 'addExtras', 'formatUuid', ...readers.flatMap((reader) => reader.names)]
      const values = [extras.arrays, extras.constants, pool.texts, addExtras, formatUuid, ...readers.flatMap((reader) => reader.values)]
      // eslint-disable-next-line @typescript-eslint/no-implied-eval
      return new Function(...parameters, body)(...values) as RecordMaker
    }
    makers.set(decl, maker)
  }
  return maker
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
  private readonly columnAt = new Map<string, number>()
  private readonly idAt: number
  private readonly extras: ValueColumn
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
    if (typeof rec.id !== 'string') assertionFailed(`${this.decl.type}: a record's id must be a string, not ${typeof rec.id}`)
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
    this.ids.write(row, rec.id)
    if (!this.index.addNew(row)) {
      ;(this.alive[chunk] as Uint8Array)[row & CHUNK_MASK] = 0
      this.liveInChunk[chunk] = (this.liveInChunk[chunk] as number) - 1
      return -1
    }
    this.rowCount = row + 1
    this.live += 1
    this.write(row, rec, true)
    if (this.index.size !== this.live) assertionFailed(`${this.decl.type}: ${this.index.size} ids indexed, ${this.live} live rows`)
    return row
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
    if (this.index.size !== this.live) assertionFailed(`${this.decl.type}: ${this.index.size} ids indexed, ${this.live} live rows`)
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
    for (const name in fields) keys += 1
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
    const record = makerOf(this.decl, this.names)(columns, this.extras.frozen(), this.pool)
    return new FrozenTable(this.rowCount, this.live, this.alive.slice(), record, () => {
      this.freeze.release()
      this.pool.unpin()
    })
  }

  /** Bytes the table's typed arrays hold (columns, live flags, the id index): memory outside V8's heap. */
  arrayBytes(): number {
    let bytes = this.ids.arrayBytes() + this.index.arrayBytes() + this.extras.arrayBytes()
    for (const [at, column] of this.columns.entries()) if (at !== this.idAt) bytes += column.arrayBytes()
    for (const alive of this.alive) bytes += alive?.byteLength ?? 0
    return bytes
  }
}

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

/** The live rows from `from` on, in order: an iterator object reusing its result (see rowSet.ts RowWalk). */
export class LiveRows implements IterableIterator<number> {
  private row: number
  private readonly result = { done: false, value: 0 }

  constructor(
    private readonly alive: readonly (Uint8Array | null)[],
    private readonly end: number,
    from: number,
  ) {
    this.row = from
  }

  [Symbol.iterator](): IterableIterator<number> {
    return this
  }

  /** The next live row, or -1 after the last. */
  nextRow(): number {
    const { alive, end } = this
    let row = this.row
    while (row < end) {
      const flags = alive[row >>> CHUNK_BITS]
      if (flags === null || flags === undefined) {
        row = ((row >>> CHUNK_BITS) + 1) << CHUNK_BITS
        continue
      }
      if (flags[row & CHUNK_MASK] === 1) {
        this.row = row + 1
        return row
      }
      row += 1
    }
    this.row = end
    return -1
  }

  next(): IteratorResult<number> {
    const row = this.nextRow()
    if (row < 0) return { done: true, value: undefined }
    this.result.value = row
    return this.result
  }
}
