/*
 * A scan of every row of a collection (plan.ts, when no index narrows the
 * candidates: a scanning `$filter`, a summary of everything) as tight loops
 * over the columns, a block of rows at a time.
 *
 * A block is BLOCK_ROWS consecutive rows of one chunk (rowChunks.ts). Its
 * live rows go into a selection (an Int32Array of row numbers, reused), and
 * each test then keeps the rows of the selection that pass it, in turn:
 *
 *   - trashed or not: in the common case a chunk's trash column is one
 *     constant (no live record is in the trash), decided once per chunk;
 *   - each top-level `and` part of the `$filter` (filterCompiler.ts
 *     rowFilterOf): a part that depends on one text or reference column
 *     reads the chunk's code array and the part's answers by code
 *     (rowScan.ts CodeMemo) directly, asking the part itself only for a
 *     code it has not seen (which it then remembers) or a misfit row;
 *   - what the columns cannot decide (a parent, a view's rule, the
 *     caller's visibility: plan.ts), row by row, when there is any.
 *
 * The consumer gets each block's selection (`visit(rows, count)`), so a
 * count adds a number and a summary reads its columns in a loop of its own
 * (summary.ts). The rows come in the collection's order, as a walk of
 * its rows gives them, and the scan pauses after every block, as every
 * scan does after SCAN_STEP_RECORDS candidates (tenants/slicedRead.ts).
 * Within one read the tenant is held, so the columns do not change
 * between pauses.
 */
import type { DisplayContext } from '../domain/schema.js'
import type { Collection } from '../engine/collection.js'
import { CodeColumn } from '../engine/columns.js'
import { CHUNK_MASK, CHUNK_ROWS } from '../engine/rowChunks.js'
import type { Steps } from '../engine/steps.js'
import { SCAN_STEP_RECORDS } from './listQuery.js'
import { MEMO_TRUE, type CodeMemo, type RowFilterPart } from './rowScan.js'

/** Rows of a block: the scan pauses after each (a divisor of CHUNK_ROWS). */
export const BLOCK_ROWS = SCAN_STEP_RECORDS

/** A block's rows that passed: `rows[0 … count - 1]`, in order. */
export type BlockVisit = (rows: Int32Array, count: number) => void

export interface BlockScan {
  /** The trashed records, or the live ones. */
  trashed: boolean
  /** The `$filter`'s parts (none without a filter). */
  parts: readonly RowFilterPart[]
  context: DisplayContext
  /** What a row must pass besides (the caller's visibility, a parent, a view), or null. */
  rowTest: ((row: number) => boolean) | null
}

/** What blocks of one chunk share: its live flags and whether its trash column decides every row of it. */
interface ChunkOfScan {
  chunk: number
  base: number
  alive: Uint8Array
  /** True or false when the trash column decides the whole chunk (one code there); null when row by row. */
  whole: boolean | null
}

/**
 * `visit` on the selection of each block of `collection`'s rows that `scan` accepts, as steps (see the top). The loops
 * over rows are in plain functions (selectBlock), not in this generator: V8 optimizes a function's loop while it
 * runs, a generator's only from its next call, and a scan calls this one once.
 */
export function* eachBlockSteps(collection: Collection, scan: BlockScan, visit: BlockVisit): Steps<void> {
  const table = collection.table
  const rowCount = table.rowCount
  const trash = collection.column('trashItem')
  const trashCodes = trash instanceof CodeColumn ? trash : null
  const trashTest = trashCodes === null ? (row: number) => ((trash?.get(row) ?? null) !== null) === scan.trashed : (row: number) => isTrashedCode(trashCodes, row) === scan.trashed
  const rows = new Int32Array(BLOCK_ROWS)
  for (let chunk = 0, base = 0; base < rowCount; chunk += 1, base += CHUNK_ROWS) {
    const alive = table.liveFlags(chunk)
    if (alive === null) continue
    const whole = trashCodes !== null && trashCodes.misfits === null && (trashCodes.arrays[chunk] ?? null) === null ? ((trashCodes.constants[chunk] ?? 0) !== 0) === scan.trashed : null
    if (whole === false) continue
    const of: ChunkOfScan = { chunk, base, alive, whole }
    const end = Math.min(CHUNK_ROWS, rowCount - base)
    for (let from = 0; from < end; from += BLOCK_ROWS) {
      const count = selectBlock(of, from, Math.min(end, from + BLOCK_ROWS), scan, trashTest, rows)
      if (count > 0) visit(rows, count)
      yield
    }
  }
}

/** The rows `from` … `to` - 1 of a chunk that `scan` accepts, into `rows`; how many. */
function selectBlock(of: ChunkOfScan, from: number, to: number, scan: BlockScan, trashTest: (row: number) => boolean, rows: Int32Array): number {
  const { alive, base } = of
  const { parts, context, rowTest } = scan
  const first = parts[0]
  let count = 0
  let tested = 0
  if (of.whole !== null && first !== undefined && first.byCode !== null && first.byCode.column.misfits === null) {
    // The common case in one loop: the live rows whose code passes the first part.
    count = selectByCode(alive, base, from, to, of.chunk, first.byCode, first, context, rows)
    tested = 1
  } else {
    for (let offset = from; offset < to; offset += 1) {
      if (alive[offset] === 1) {
        rows[count] = base + offset
        count += 1
      }
    }
    if (of.whole === null) count = keepPassing(rows, count, trashTest)
  }
  for (let at = tested; at < parts.length; at += 1) {
    if (count === 0) return 0
    const part = parts[at] as RowFilterPart
    count = part.byCode === null ? keepPassing(rows, count, (row) => part.test(row, context)) : keepByCode(rows, count, of.chunk, part.byCode, part, context)
  }
  if (rowTest !== null && count > 0) count = keepPassing(rows, count, rowTest)
  return count
}

function isTrashedCode(trash: CodeColumn, row: number): boolean {
  return trash.code(row) !== 0 || trash.misfits?.has(row) === true
}

/** Keeps the first `count` of `rows` that pass `test`, in order; how many. */
function keepPassing(rows: Int32Array, count: number, test: (row: number) => boolean): number {
  let kept = 0
  for (let at = 0; at < count; at += 1) {
    const row = rows[at] as number
    if (test(row)) {
      rows[kept] = row
      kept += 1
    }
  }
  return kept
}

/** The live rows `from` … `to` - 1 of a chunk (its flags: `alive`) that pass `part`, answered by code (`memo`: its column has no misfit), into `rows`; how many. */
function selectByCode(alive: Uint8Array, base: number, from: number, to: number, chunk: number, memo: CodeMemo, part: RowFilterPart, context: DisplayContext, rows: Int32Array): number {
  memo.check()
  const codes = memo.column.arrays[chunk] ?? null
  let count = 0
  if (codes === null) {
    // One code for the whole chunk: one answer, asked of the part at the first live row.
    let passes: boolean | null = null
    for (let offset = from; offset < to; offset += 1) {
      if (alive[offset] !== 1) continue
      passes ??= part.test(base + offset, context)
      if (!passes) return 0
      rows[count] = base + offset
      count += 1
    }
    return count
  }
  const passing = MEMO_TRUE
  let answers = memo.bytes
  for (let offset = from; offset < to; offset += 1) {
    if (alive[offset] !== 1) continue
    const code = codes[offset] as number
    let known = code < answers.length ? (answers[code] as number) : 0
    if (known === 0) {
      known = part.test(base + offset, context) ? passing : 0
      answers = memo.bytes
    }
    if (known === passing) {
      rows[count] = base + offset
      count += 1
    }
  }
  return count
}

/** keepPassing for a part answered by code (`memo`), over rows of `chunk`: the code array and the answers read directly. */
function keepByCode(rows: Int32Array, count: number, chunk: number, memo: CodeMemo, part: RowFilterPart, context: DisplayContext): number {
  memo.check()
  const column = memo.column
  const misfits = column.misfits
  const codes = column.arrays[chunk] ?? null
  const constant = column.constants[chunk] ?? 0
  let answers = memo.bytes
  let kept = 0
  for (let at = 0; at < count; at += 1) {
    const row = rows[at] as number
    let passes: boolean
    if (misfits?.has(row)) passes = part.test(row, context)
    else {
      const code = codes === null ? constant : (codes[row & CHUNK_MASK] as number)
      const known = code < answers.length ? (answers[code] as number) : 0
      if (known === 0) {
        passes = part.test(row, context)
        answers = memo.bytes
      } else passes = known === MEMO_TRUE
    }
    if (passes) {
      rows[kept] = row
      kept += 1
    }
  }
  return kept
}
