/*
 * Indexing many rows of a column table at once (a snapshot's load, a
 * replay's new records: Collection.finishLoadSteps), in steps of a bounded
 * number of rows: a secondary index is filled by a counting sort over the
 * rows' pool codes, each key taking a view of one shared array
 * (PostingIndex.addRows), where `add` a row at a time misses the cache at
 * every row; the codes are read a chunk's array at a time.
 */
import type { CodeColumn } from './columns.js'
import type { ColumnTable } from './columnTable.js'
import type { PostingIndex, RowKeySet } from './postingIndex.js'
import { CHUNK_BITS, CHUNK_MASK } from './rowChunks.js'
import type { Steps } from './steps.js'

/** The key of `row` in an index of `column`: its pool code, or (code 0) its misfit value; null when the row has no value. */
export function keyOf(column: CodeColumn, row: number): { code: number; misfit: unknown } | null {
  const code = column.code(row)
  if (code !== 0) return { code, misfit: null }
  const misfit = column.misfits?.get(row)
  return misfit === undefined || misfit === null ? null : { code: 0, misfit }
}

/**
 * Adds the live rows in [from, to) to one secondary index, as a counting sort: the rows of each code are counted,
 * then written, in order, into one array where each code's rows follow the previous code's, and each key takes its
 * part of it (PostingIndex.addRows: a view, no copy; a million time records' five indexes took 400 ms of
 * `add`s a row at a time). Both passes read the codes a chunk's array at a time (eachLiveRange).
 */
export function* indexRowsSteps(table: ColumnTable, column: CodeColumn, index: PostingIndex<RowKeySet>, from: number, to: number, stepRows: number): Steps<void> {
  const counts = new Int32Array(column.pool.texts.length + 1)
  yield* eachLiveRange(table, from, to, stepRows, (chunk, flags, start, end) => {
    const codes = column.arrays[chunk]
    const constant = column.constants[chunk] ?? 0
    for (let offset = start; offset < end; offset += 1) {
      if (flags[offset] !== 1) continue
      const code = codes === null || codes === undefined ? constant : (codes[offset] as number)
      counts[code] = (counts[code] as number) + 1
    }
  })
  // Where each code's rows start in `sorted` (code 0, null or a misfit, has none there).
  const starts = new Int32Array(counts.length + 1)
  for (let code = 1; code < counts.length; code += 1) starts[code + 1] = (starts[code] as number) + (counts[code] as number)
  const sorted = new Int32Array(starts[counts.length] as number)
  const next = starts.slice(0, counts.length)
  yield* eachLiveRange(table, from, to, stepRows, (chunk, flags, start, end) => {
    const codes = column.arrays[chunk]
    const constant = column.constants[chunk] ?? 0
    const first = chunk << CHUNK_BITS
    for (let offset = start; offset < end; offset += 1) {
      if (flags[offset] !== 1) continue
      const code = codes === null || codes === undefined ? constant : (codes[offset] as number)
      if (code !== 0) {
        const at = next[code] as number
        sorted[at] = first + offset
        next[code] = at + 1
      } else {
        const key = keyOf(column, first + offset)
        if (key !== null) index.add(key.code, key.misfit, first + offset)
      }
    }
  })
  // A key that holds rows already (a replay's rows after a load) copies them to make room: a pause every step's worth.
  let taken = 0
  for (let code = 1; code < counts.length; code += 1) {
    if (counts[code] === 0) continue
    taken += index.addRows(code, sorted.subarray(starts[code] as number, starts[code + 1] as number))
    if (taken >= stepRows) {
      taken = 0
      yield
    }
  }
}

/**
 * `visit` for each piece of [from, to) within one chunk of rows and at most `stepRows` long: the chunk, its
 * rows' live flags, and the offsets [start, end) in it; a pause after each. Chunks whose rows are all removed are
 * passed over.
 */
export function* eachLiveRange(table: ColumnTable, from: number, to: number, stepRows: number, visit: (chunk: number, flags: Uint8Array, start: number, end: number) => void): Steps<void> {
  for (let start = from; start < to; ) {
    const chunk = start >>> CHUNK_BITS
    const end = Math.min(to, (chunk + 1) << CHUNK_BITS, start + stepRows)
    const flags = table.liveFlags(chunk)
    if (flags !== null) visit(chunk, flags, start & CHUNK_MASK, end - (chunk << CHUNK_BITS))
    start = end
    yield
  }
}
