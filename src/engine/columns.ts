/*
 * A field's values by row (rowChunks.ts: in chunks of CHUNK_ROWS), in
 * arrays sized to the field's type:
 *
 *   NumberColumn  dates, integers, doubles: a chunk is an Int32Array while
 *                 all its values are 32-bit integers (null: INT_NULL), a
 *                 Float64Array otherwise (null: NaN)
 *   CodeColumn    texts and references: codes of the tenant's string pool
 *                 (stringPool.ts; 0 null), a chunk a Uint8Array,
 *                 Uint16Array or Int32Array, the narrowest its codes fit
 *   FlagColumn    booleans: a Uint8Array (0 null, 1 false, 2 true;
 *                 flagColumn.ts)
 *   ValueColumn   anything else (lists of references, fields a declaration
 *                 does not have): a plain array (valueColumn.ts)
 *
 * A chunk whose rows all hold one value keeps no array at all, only that
 * value (its `constant`): a field that is null, false or the same in every
 * row of a chunk (externalSyncedAt, approved, trashItem of live records)
 * costs nothing. The first differing value gives the chunk its array.
 *
 * A value a column's type does not hold (a text in a date field, an
 * infinite number, undefined: data older than a declaration, or a test's)
 * is kept exactly, in the column's `misfits` map by row; the array holds
 * null there. A read gives back exactly what was written.
 *
 * A write over a row that an open frozen view may read copies the chunk
 * first (rowChunks.ts); `frozen()` gives such a view of the column.
 */
import { assert } from '../assert.js'
import { CHUNK_BITS, CHUNK_MASK, CHUNK_ROWS, type FreezeState } from './rowChunks.js'
import type { StringPool } from './stringPool.js'
import type { CodeChunks, NumberChunks } from './tableImage.js'

/** What every column and every frozen view of one answers: the value of a row. */
export interface ColumnReader {
  get(row: number): unknown
}

export interface Column extends ColumnReader {
  /** Stores `value` at `row`: a row just appended (`fresh`), or one that holds a value already. */
  write(row: number, value: unknown, fresh: boolean): void
  /** The row is removed: what its value holds (a pool code) is let go. The live state reads the row no more. */
  clear(row: number): void
  /** Every row of the chunk is removed: its array goes. */
  dropChunk(chunk: number): void
  /** The column as it is now, unchanged by later writes while its view is open (rowChunks.ts). */
  frozen(): ColumnReader
  /** Bytes its arrays hold (a plain array's slot counted as 8). */
  arrayBytes(): number
}

/** The null of an Int32Array chunk (so that value is kept in a Float64Array chunk). */
export const INT_NULL = -2147483648

function fitsInt(value: number): boolean {
  return (value | 0) === value && value !== INT_NULL && !Object.is(value, -0)
}

/** Misfits (row → a value the column's type does not hold: see the top) with `row`'s; null stands for none. */
export function withMisfit(misfits: Map<number, unknown> | null, row: number, value: unknown): Map<number, unknown> {
  const out = misfits ?? new Map<number, unknown>()
  out.set(row, value)
  return out
}

export function withoutMisfit(misfits: Map<number, unknown> | null, row: number): Map<number, unknown> | null {
  if (misfits === null || !misfits.delete(row)) return misfits
  return misfits.size === 0 ? null : misfits
}

export function copyOf(misfits: Map<number, unknown> | null): Map<number, unknown> | null {
  return misfits === null ? null : new Map(misfits)
}

/** Per chunk of a column: the epoch (FreezeState) at which its array was last made or copied. */
export class ChunkStamps {
  private readonly copiedAt: number[] = []

  constructor(private readonly freeze: FreezeState) {}

  add(): void {
    this.copiedAt.push(0)
  }

  /**
   * A column's lists (`into`, all empty) take a snapshot's chunks (`from`, equally long: tableImage.ts) as they are,
   * a stamp each: the arrays are the column's own from then on.
   */
  adopt(into: readonly unknown[][], from: readonly (readonly unknown[])[]): void {
    for (const [at, list] of into.entries()) {
      const chunks = from[at] as readonly unknown[]
      assert(list.length === 0 && chunks.length === (from[0] as readonly unknown[]).length, 'chunks adopted by an empty column, as many in each list')
      for (const chunk of chunks) list.push(chunk)
    }
    for (const _ of from[0] ?? []) this.copiedAt.push(0)
  }

  /** Whether a write over `row` of `chunk` must copy the chunk first (an open view may read it). */
  shared(chunk: number, row: number): boolean {
    return row < this.freeze.frozenRows && this.copiedAt[chunk] !== this.freeze.epoch
  }

  stamp(chunk: number): void {
    this.copiedAt[chunk] = this.freeze.epoch
  }
}

// ---------------------------------------------------------------------------
// Numbers

export class NumberView implements ColumnReader {
  constructor(
    readonly floats: (Float64Array | null)[],
    readonly ints: (Int32Array | null)[],
    /** A chunk without an array: the value of all its rows (undefined: it has none yet). */
    readonly constants: (number | null | undefined)[],
    public misfits: Map<number, unknown> | null,
  ) {}

  get(row: number): unknown {
    if (this.misfits?.has(row)) return this.misfits.get(row)
    return this.number(row)
  }

  /** The number at `row`, null for none (a misfit reads as null: see `misfits`). */
  number(row: number): number | null {
    const chunk = row >>> CHUNK_BITS
    const floats = this.floats[chunk]
    if (floats !== null && floats !== undefined) {
      const value = floats[row & CHUNK_MASK] as number
      return Number.isNaN(value) ? null : value
    }
    const ints = this.ints[chunk]
    if (ints !== null && ints !== undefined) {
      const value = ints[row & CHUNK_MASK] as number
      return value === INT_NULL ? null : value
    }
    return this.constants[chunk] ?? null
  }
}

export class NumberColumn extends NumberView implements Column {
  private readonly stamps: ChunkStamps

  constructor(freeze: FreezeState) {
    super([], [], [], null)
    this.stamps = new ChunkStamps(freeze)
  }

  write(row: number, value: unknown, fresh: boolean): void {
    const chunk = row >>> CHUNK_BITS
    const at = row & CHUNK_MASK
    const { floats, ints, constants } = this
    while (constants.length <= chunk) {
      floats.push(null)
      ints.push(null)
      constants.push(undefined)
      this.stamps.add()
    }
    let number: number | null = null
    if (typeof value === 'number' && Number.isFinite(value)) number = value
    else if (value !== null) this.misfits = withMisfit(this.misfits, row, value)
    if (number !== null || value === null) this.misfits = withoutMisfit(this.misfits, row)
    if (!fresh && this.stamps.shared(chunk, row)) {
      const f = floats[chunk]
      const i = ints[chunk]
      if (f !== null && f !== undefined) floats[chunk] = f.slice()
      if (i !== null && i !== undefined) ints[chunk] = i.slice()
      this.stamps.stamp(chunk)
    }
    const f = floats[chunk]
    if (f !== null && f !== undefined) {
      f[at] = number ?? Number.NaN
      return
    }
    const i = ints[chunk]
    if (i !== null && i !== undefined) {
      if (number === null) i[at] = INT_NULL
      else if (fitsInt(number)) i[at] = number
      else {
        const wide = new Float64Array(CHUNK_ROWS)
        for (let offset = 0; offset < CHUNK_ROWS; offset += 1) {
          const held = i[offset] as number
          wide[offset] = held === INT_NULL ? Number.NaN : held
        }
        wide[at] = number
        floats[chunk] = wide
        ints[chunk] = null
        this.stamps.stamp(chunk)
      }
      return
    }
    const constant = constants[chunk]
    if (constant === undefined) {
      constants[chunk] = number
      return
    }
    if (Object.is(constant, number)) return
    if ((constant === null || fitsInt(constant)) && (number === null || fitsInt(number))) {
      const made = new Int32Array(CHUNK_ROWS).fill(constant ?? INT_NULL)
      made[at] = number ?? INT_NULL
      ints[chunk] = made
    } else {
      const made = new Float64Array(CHUNK_ROWS).fill(constant ?? Number.NaN)
      made[at] = number ?? Number.NaN
      floats[chunk] = made
    }
    constants[chunk] = null
    this.stamps.stamp(chunk)
  }

  clear(row: number): void {
    this.misfits = withoutMisfit(this.misfits, row)
  }

  dropChunk(chunk: number): void {
    this.floats[chunk] = null
    this.ints[chunk] = null
    this.constants[chunk] = null
  }

  /** Takes a snapshot's chunks (tableImage.ts) as its own; the column held no rows. */
  adopt(image: NumberChunks): void {
    this.stamps.adopt([this.floats, this.ints, this.constants], [image.floats, image.ints, image.constants])
    this.misfits = image.misfits
  }

  frozen(): NumberView {
    return new NumberView(this.floats.slice(), this.ints.slice(), this.constants.slice(), copyOf(this.misfits))
  }

  arrayBytes(): number {
    let bytes = 0
    for (const floats of this.floats) bytes += floats?.byteLength ?? 0
    for (const ints of this.ints) bytes += ints?.byteLength ?? 0
    return bytes
  }
}

// ---------------------------------------------------------------------------
// Texts and references: string pool codes

type CodeArray = Uint8Array | Uint16Array | Int32Array

function codeArrayFor(code: number): CodeArray {
  return code <= 0xff ? new Uint8Array(CHUNK_ROWS) : code <= 0xffff ? new Uint16Array(CHUNK_ROWS) : new Int32Array(CHUNK_ROWS)
}

function holds(codes: CodeArray, code: number): boolean {
  return codes instanceof Int32Array || (codes instanceof Uint16Array ? code <= 0xffff : code <= 0xff)
}

export class CodeView implements ColumnReader {
  constructor(
    readonly pool: StringPool,
    /** Per chunk: its codes, or null when all its rows hold `constants[chunk]`. */
    readonly arrays: (CodeArray | null)[],
    readonly constants: (number | undefined)[],
    public misfits: Map<number, unknown> | null,
  ) {}

  get(row: number): unknown {
    if (this.misfits?.has(row)) return this.misfits.get(row)
    const code = this.code(row)
    return code === 0 ? null : this.pool.text(code)
  }

  /** The pool code at `row` (0: null, or a misfit). */
  code(row: number): number {
    const chunk = row >>> CHUNK_BITS
    const codes = this.arrays[chunk]
    if (codes !== null && codes !== undefined) return codes[row & CHUNK_MASK] as number
    return this.constants[chunk] ?? 0
  }
}

export class CodeColumn extends CodeView implements Column {
  private readonly stamps: ChunkStamps

  constructor(freeze: FreezeState, pool: StringPool) {
    super(pool, [], [], null)
    this.stamps = new ChunkStamps(freeze)
  }

  write(row: number, value: unknown, fresh: boolean): void {
    const chunk = row >>> CHUNK_BITS
    const { arrays, constants } = this
    while (constants.length <= chunk) {
      arrays.push(null)
      constants.push(undefined)
      this.stamps.add()
    }
    const code = typeof value === 'string' ? this.pool.take(value) : 0
    this.misfits = code === 0 && value !== null ? withMisfit(this.misfits, row, value) : withoutMisfit(this.misfits, row)
    const before = fresh ? 0 : this.code(row)
    this.put(chunk, row, code, fresh)
    this.pool.release(before)
  }

  private put(chunk: number, row: number, code: number, fresh: boolean): void {
    const { arrays, constants } = this
    let codes = arrays[chunk]
    if (codes !== null && codes !== undefined) {
      if (!fresh && this.stamps.shared(chunk, row)) {
        codes = codes.slice()
        arrays[chunk] = codes
        this.stamps.stamp(chunk)
      }
      if (!holds(codes, code)) {
        const wide = codeArrayFor(code)
        wide.set(codes)
        arrays[chunk] = wide
        codes = wide
        this.stamps.stamp(chunk)
      }
      codes[row & CHUNK_MASK] = code
      return
    }
    const constant = constants[chunk]
    if (constant === undefined) {
      constants[chunk] = code
      return
    }
    if (constant === code) return
    const made = codeArrayFor(Math.max(constant, code))
    made.fill(constant)
    made[row & CHUNK_MASK] = code
    arrays[chunk] = made
    constants[chunk] = 0
    this.stamps.stamp(chunk)
  }

  clear(row: number): void {
    this.misfits = withoutMisfit(this.misfits, row)
    this.pool.release(this.code(row))
  }

  dropChunk(chunk: number): void {
    this.arrays[chunk] = null
    this.constants[chunk] = 0
  }

  /** Takes a snapshot's chunks (tableImage.ts) as its own; the column held no rows. Their codes are counted by the pool apart (StringPool.countLoaded). */
  adopt(image: CodeChunks): void {
    this.stamps.adopt([this.arrays, this.constants], [image.arrays, image.constants])
    this.misfits = image.misfits
  }

  frozen(): CodeView {
    return new CodeView(this.pool, this.arrays.slice(), this.constants.slice(), copyOf(this.misfits))
  }

  arrayBytes(): number {
    let bytes = 0
    for (const codes of this.arrays) bytes += codes?.byteLength ?? 0
    return bytes
  }
}
