/*
 * The hook through which live aggregates (append counters, sums, report
 * totals, personal projects) follow a tenant's state: TenantState calls
 * every observer on each put and removal, in apply and in replay alike, and
 * resets them all when the state is rebuilt.
 */
import type { Rec } from '../domain/record.js'
import type { Collection } from './collection.js'
import { CodeColumn } from './columns.js'

/** Sees every change: before is undefined on insert, after is undefined on removal. */
export interface StateObserver {
  onChange(type: string, before: Rec | undefined, after: Rec | undefined): void
  /** Whether it reads the records of `type` at all: a snapshot's collection loaded as columns is shown to it record by record only then (TenantState.restoreSteps). */
  follows(type: string): boolean
  /**
   * A snapshot's collection of `type` was loaded as columns: true when the observer took what it needs from the
   * columns (untrashedRows), false to be shown each record instead (the default).
   */
  takeLoaded?(type: string, collection: Collection): boolean
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

/** Visits each live row of the collection whose trashItem is null (a value there other than a reference, or none at all, counts as trashed: `child.trashItem !== null`). */
export function untrashedRows(collection: Collection, visit: (row: number) => void): void {
  const trash = collection.column('trashItem')
  if (!(trash instanceof CodeColumn)) {
    for (const row of collection.rows()) visit(row)
    return
  }
  for (const row of collection.rows()) if (trash.code(row) === 0 && trash.misfits?.has(row) !== true && !collection.table.lacks(row, 'trashItem')) visit(row)
}

/** untrashedRows over the rows [from, to) alone, in order. */
export function untrashedRowsIn(collection: Collection, from: number, to: number, visit: (row: number) => void): void {
  const { table } = collection
  const trash = collection.column('trashItem')
  for (let row = from; row < to; row += 1) {
    if (!table.isLive(row)) continue
    if (!(trash instanceof CodeColumn) || (trash.code(row) === 0 && trash.misfits?.has(row) !== true && !table.lacks(row, 'trashItem'))) visit(row)
  }
}
