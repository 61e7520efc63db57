/*
 * The hook through which live aggregates (append counters, sums, report
 * totals, personal projects) follow a tenant's state: TenantState calls
 * every observer on each put and removal, in apply and in replay alike, and
 * resets them all when the state is rebuilt.
 */
import type { Rec } from '../domain/record.js'
import type { Collection } from './collection.js'
import { CodeColumn } from './columns.js'
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
  /** Forget everything (the state is being rebuilt). */
  reset(): void
}

/** Live rows untrashedRowsSteps reads between two pauses (a chunk: rowChunks.ts). */
const UNTRASHED_STEP_ROWS = 4096

/**
 * Visits each live row of the collection whose trashItem is null (a value there other than a reference, or none at
 * all, counts as trashed: `child.trashItem !== null`), pausing every UNTRASHED_STEP_ROWS live rows.
 */
export function* untrashedRowsSteps(collection: Collection, visit: (row: number) => void): Steps<void> {
  const trash = collection.column('trashItem')
  const counts = (row: number) => !(trash instanceof CodeColumn) || (trash.code(row) === 0 && trash.misfits?.has(row) !== true && !collection.table.lacks(row, 'trashItem'))
  let read = 0
  for (const row of collection.rows()) {
    if (counts(row)) visit(row)
    if (++read % UNTRASHED_STEP_ROWS === 0) yield
  }
}
