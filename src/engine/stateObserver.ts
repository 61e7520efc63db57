/*
 * The hook through which live aggregates (append counters, sums, report
 * totals, personal projects) follow a tenant's state: TenantState calls
 * every observer on each put and removal, in apply and in replay alike, and
 * resets them all when the state is rebuilt.
 */
import type { Rec } from '../domain/record.js'
import type { Collection } from './collection.js'
import { CodeColumn } from './columns.js'
import { CHUNK_BITS, CHUNK_ROWS } from './rowChunks.js'
import type { Steps } from './steps.js'

/** Sees every change: before is undefined on insert, after is undefined on removal. */
export interface StateObserver {
  onChange(type: string, before: Rec | undefined, after: Rec | undefined): void
  /** Whether it reads the records of `type` at all: a snapshot's collection loaded as columns is shown to it record by record only then (TenantState.restoreSteps). */
  follows(type: string): boolean
  /**
   * A snapshot's collection of `type` was loaded as columns: true when the observer took what it needs from the
   * columns (untrashedRowsSteps), false to be shown each record instead (the default). As steps: a million rows
   * read at once held the event loop for 75 ms.
   */
  takeLoadedSteps?(type: string, collection: Collection): Steps<boolean>
  /**
   * The records of `type` at the live rows [from, to) of the collection were inserted (replaying the log:
   * TenantState.applyEntry), in row order: true when the observer took them from the columns as onChange would
   * have seen them one by one, false to be shown each record instead (the default). Either way the collection may
   * hold rows inserted after them already (the other collections are as they were).
   */
  takeRows?(type: string, collection: Collection, from: number, to: number): boolean
  /** Forget everything (the state is being rebuilt). */
  reset(): void
}

/**
 * Visits each live row of the collection whose trashItem is null (a value there other than a reference, or none at
 * all, counts as trashed: `child.trashItem !== null`), a chunk of rows (rowChunks.ts) per step. A chunk whose
 * trashItem is null in every row (one constant, nothing set aside, no row lacking the field) visits its live rows
 * without reading the field per row.
 */
export function* untrashedRowsSteps(collection: Collection, visit: (row: number) => void): Steps<void> {
  const trash = collection.column('trashItem')
  const { table } = collection
  const untrashed = (row: number) => !(trash instanceof CodeColumn) || (trash.code(row) === 0 && trash.misfits?.has(row) !== true && !table.lacks(row, 'trashItem'))
  for (let chunk = 0; chunk << CHUNK_BITS < table.rowCount; chunk += 1) {
    const flags = table.liveFlags(chunk)
    if (flags !== null) {
      const first = chunk << CHUNK_BITS
      const end = Math.min(CHUNK_ROWS, table.rowCount - first)
      const allNull = !(trash instanceof CodeColumn) || ((trash.arrays[chunk] ?? null) === null && (trash.constants[chunk] ?? 0) === 0 && trash.misfits === null && table.noExtrasIn(chunk))
      for (let offset = 0; offset < end; offset += 1) if (flags[offset] === 1 && (allNull || untrashed(first + offset))) visit(first + offset)
    }
    yield
  }
}

/** The rows untrashedRowsSteps visits, of [from, to) alone, in order and at once. */
export function untrashedRowsIn(collection: Collection, from: number, to: number, visit: (row: number) => void): void {
  const { table } = collection
  const trash = collection.column('trashItem')
  for (let row = from; row < to; row += 1) {
    if (!table.isLive(row)) continue
    if (!(trash instanceof CodeColumn) || (trash.code(row) === 0 && trash.misfits?.has(row) !== true && !table.lacks(row, 'trashItem'))) visit(row)
  }
}
