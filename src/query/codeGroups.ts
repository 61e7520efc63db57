/*
 * A summary's groups over columns (summary.ts summaryOfBlocksSteps), when
 * the summary groups by nothing or by a text or reference kept as it is
 * (`user/id`) and every function reads a number or date field kept as it
 * is (`sum(duration)`): the groups are pool codes (nothing: code 0), and
 * each group's count and each function's count, sum, min and max are
 * kept in typed arrays indexed by code, so a block of rows is a loop that
 * reads a code array and a number array per chunk and adds into arrays: no
 * record, no boxed value, no map per row.
 *
 * The values are added in the rows' order, as the Accumulator of a group
 * adds them, so the sums come out the same to the last bit. A column with
 * misfits (a value its type does not hold) is not read here: the summary
 * then reads its rows one by one (`fits`).
 */
import { CodeColumn, INT_NULL, NumberView, type Column } from '../engine/columns.js'
import { CHUNK_BITS, CHUNK_MASK } from '../engine/rowChunks.js'

/** The most codes grouped in arrays (a pool of more texts: the summary groups row by row). */
const MAX_GROUP_CODES = 65_536

/** One function's figures by group code. */
interface Figures {
  column: NumberView | null
  counts: Float64Array
  sums: Float64Array
  /** NaN: none yet. */
  mins: Float64Array
  maxes: Float64Array
}

/** A group's figures as summary.ts's Accumulators hold them. */
export interface CodeGroup {
  code: number
  records: number
  figures: { count: number; sum: number; min: number | null; max: number | null }[]
}

export class CodeGroups {
  private readonly records: Float64Array
  private readonly functions: Figures[]
  private readonly codes: Int32Array

  /**
   * Groups by `groupColumn` (null: one group, code 0) with the figures of `columns` (null: count() only), for rows
   * in blocks of at most `blockRows`; null when these columns are not read this way (see the top: `fits`).
   */
  static of(groupColumn: Column | null | undefined, columns: readonly (Column | null | undefined)[], blockRows: number): CodeGroups | null {
    if (groupColumn !== null && !(groupColumn instanceof CodeColumn && groupColumn.misfits === null)) return null
    const size = groupColumn === null ? 1 : groupColumn.pool.texts.length + 1
    if (size > MAX_GROUP_CODES) return null
    const numbers: (NumberView | null)[] = []
    for (const column of columns) {
      if (column === null) numbers.push(null)
      else if (column instanceof NumberView && column.misfits === null) numbers.push(column)
      else return null
    }
    return new CodeGroups(groupColumn, numbers, size, blockRows)
  }

  private constructor(
    private readonly groupColumn: CodeColumn | null,
    columns: readonly (NumberView | null)[],
    size: number,
    blockRows: number,
  ) {
    this.records = new Float64Array(size)
    this.codes = new Int32Array(blockRows)
    this.functions = columns.map((column) => ({
      column,
      counts: new Float64Array(column === null ? 0 : size),
      sums: new Float64Array(column === null ? 0 : size),
      mins: new Float64Array(column === null ? 0 : size).fill(Number.NaN),
      maxes: new Float64Array(column === null ? 0 : size).fill(Number.NaN),
    }))
  }

  /** Counts `rows[0 … count - 1]` in. */
  add(rows: Int32Array, count: number): void {
    const codes = this.codes
    this.codesOf(rows, count, codes)
    const records = this.records
    for (let at = 0; at < count; at += 1) {
      const code = codes[at] as number
      records[code] = (records[code] as number) + 1
    }
    for (const figures of this.functions) if (figures.column !== null) addNumbers(figures, figures.column, rows, count, codes)
  }

  /** The group code of each row into `codes`. */
  private codesOf(rows: Int32Array, count: number, codes: Int32Array): void {
    const column = this.groupColumn
    if (column === null) {
      codes.fill(0, 0, count)
      return
    }
    for (let from = 0; from < count; ) {
      const chunk = (rows[from] as number) >>> CHUNK_BITS
      const to = sameChunkEnd(rows, from, count)
      const array = column.arrays[chunk] ?? null
      if (array === null) codes.fill(column.constants[chunk] ?? 0, from, to)
      else for (let at = from; at < to; at += 1) codes[at] = array[(rows[at] as number) & CHUNK_MASK] as number
      from = to
    }
  }

  /** The groups that counted a row, by code ascending. */
  groups(): CodeGroup[] {
    const out: CodeGroup[] = []
    const records = this.records
    for (let code = 0; code < records.length; code += 1) {
      const counted = records[code] as number
      if (counted === 0) continue
      out.push({
        code,
        records: counted,
        figures: this.functions.map((figures) => {
          if (figures.column === null) return { count: 0, sum: 0, min: null, max: null }
          const min = figures.mins[code] as number
          const max = figures.maxes[code] as number
          return { count: figures.counts[code] as number, sum: figures.sums[code] as number, min: Number.isNaN(min) ? null : min, max: Number.isNaN(max) ? null : max }
        }),
      })
    }
    return out
  }
}

/** The end of the run of `rows` from `from` on that lie in the chunk of `rows[from]` (a block of a whole scan: all). */
function sameChunkEnd(rows: Int32Array, from: number, count: number): number {
  const chunk = (rows[from] as number) >>> CHUNK_BITS
  let to = from + 1
  while (to < count && (rows[to] as number) >>> CHUNK_BITS === chunk) to += 1
  return to
}

/**
 * Adds the numbers of `column` at `rows` into the figures of their groups (`codes`); a null is no number. A run of
 * rows of one chunk reads one kind of array (a loop each: a number never changes representation inside one).
 */
function addNumbers(figures: Figures, column: NumberView, rows: Int32Array, count: number, codes: Int32Array): void {
  for (let from = 0; from < count; ) {
    const chunk = (rows[from] as number) >>> CHUNK_BITS
    const to = sameChunkEnd(rows, from, count)
    const floats = column.floats[chunk] ?? null
    const ints = column.ints[chunk] ?? null
    if (floats !== null) addFloats(figures, floats, rows, from, to, codes)
    else if (ints !== null) addInts(figures, ints, rows, from, to, codes)
    else {
      const constant = column.constants[chunk] ?? null
      if (constant !== null) for (let at = from; at < to; at += 1) addOne(figures, codes[at] as number, constant)
    }
    from = to
  }
}

function addFloats(figures: Figures, floats: Float64Array, rows: Int32Array, from: number, to: number, codes: Int32Array): void {
  for (let at = from; at < to; at += 1) {
    const value = floats[(rows[at] as number) & CHUNK_MASK] as number
    if (!Number.isNaN(value)) addOne(figures, codes[at] as number, value)
  }
}

function addInts(figures: Figures, ints: Int32Array, rows: Int32Array, from: number, to: number, codes: Int32Array): void {
  for (let at = from; at < to; at += 1) {
    const value = ints[(rows[at] as number) & CHUNK_MASK] as number
    if (value !== INT_NULL) addOne(figures, codes[at] as number, value)
  }
}

function addOne(figures: Figures, code: number, value: number): void {
  const { counts, sums, mins, maxes } = figures
  counts[code] = (counts[code] as number) + 1
  sums[code] = (sums[code] as number) + value
  const min = mins[code] as number
  if (Number.isNaN(min) || value < min) mins[code] = value
  const max = maxes[code] as number
  if (Number.isNaN(max) || value > max) maxes[code] = value
}
