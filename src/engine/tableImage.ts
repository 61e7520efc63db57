/*
 * A collection's columns as a snapshot stores them (design §11: snapshots
 * are the columns): the very chunk lists a frozen view of the table reads
 * (rowChunks.ts), typed arrays and per-chunk constants, with the rows'
 * live flags, so that writing a snapshot copies no record and loading one
 * hands the arrays back to empty columns (`adopt`) instead of writing a
 * million records into them one field at a time. persist/snapshotFormat6.ts
 * lays the arrays out as raw bytes and the rest as msgpack.
 *
 * Only what cannot be made again cheaply is in the image: the id → row
 * index, the secondary and range indexes and the pool's counts are rebuilt
 * from the loaded columns in bulk (ColumnTable.restoreSteps,
 * RowIndex.addAllSteps, Collection.finishLoadSteps, StringPool.countChunk),
 * which costs a few passes over the rows (about 0.3 s for a million time
 * records) and keeps the format free of the indexes' layouts (and of the
 * process's hash seed).
 *
 * A row's extras are stored as rowExtras.ts says.
 */
import { assert } from '../assert.js'
import { CHUNK_ROWS } from './rowChunks.js'

export type CodeArray = Uint8Array | Uint16Array | Int32Array

export interface NumberChunks {
  readonly kind: 'number'
  readonly floats: readonly (Float64Array | null)[]
  readonly ints: readonly (Int32Array | null)[]
  readonly constants: readonly (number | null | undefined)[]
  readonly misfits: Map<number, unknown> | null
}

export interface CodeChunks {
  readonly kind: 'code'
  readonly arrays: readonly (CodeArray | null)[]
  readonly constants: readonly (number | undefined)[]
  readonly misfits: Map<number, unknown> | null
}

export interface FlagChunks {
  readonly kind: 'flag'
  readonly arrays: readonly (Uint8Array | null)[]
  readonly constants: readonly (number | undefined)[]
  readonly misfits: Map<number, unknown> | null
}

export interface ValueChunks {
  readonly kind: 'value'
  readonly arrays: readonly (unknown[] | null)[]
  readonly constants: readonly unknown[]
}

export interface IdChunks {
  readonly kind: 'id'
  /** Four words a row (idColumn.ts). */
  readonly words: readonly (Int32Array | null)[]
  readonly others: readonly (Map<number, string> | null)[]
}

export type ColumnChunks = NumberChunks | CodeChunks | FlagChunks | ValueChunks | IdChunks

export interface TableImage {
  readonly type: string
  /** Rows appended, live or removed (a removed row stays a hole: columnTable.ts). */
  readonly rowCount: number
  /** The records' field names, a column each, in order (the id's among them). */
  readonly names: readonly string[]
  readonly columns: readonly ColumnChunks[]
  /** Per chunk: 1 for a live row (null: a chunk whose rows are all removed). */
  readonly alive: readonly (Uint8Array | null)[]
  /** The rows' extras, stored (see the top). */
  readonly extras: ValueChunks
}

/** A tenant's string pool as a snapshot stores it: the text of each code - 1 (null: a free code). */
export interface PoolImage {
  readonly texts: readonly (string | null)[]
}

/** Checks that every list of `column` has `chunks` entries and every array its chunk's length; an Error naming `where` otherwise. */
export function checkChunks(column: ColumnChunks, chunks: number, where: string): void {
  const arrays: (readonly unknown[])[] = column.kind === 'number' ? [column.floats, column.ints] : column.kind === 'id' ? [column.words] : [column.arrays]
  const constants: readonly unknown[] = column.kind === 'number' ? column.constants : column.kind === 'id' ? column.others : column.constants
  if (constants.length !== chunks) throw new Error(`${where}: ${constants.length} chunks, ${chunks} expected`)
  const length = column.kind === 'id' ? CHUNK_ROWS * 4 : CHUNK_ROWS
  for (const list of arrays) {
    if (list.length !== chunks) throw new Error(`${where}: ${list.length} chunks, ${chunks} expected`)
    for (const chunk of list) {
      if (chunk !== null && (chunk as ArrayLike<unknown>).length !== length) throw new Error(`${where}: a chunk of ${(chunk as ArrayLike<unknown>).length} values, ${length} expected`)
    }
  }
  assert(chunks >= 0, 'a chunk count is never negative')
}
