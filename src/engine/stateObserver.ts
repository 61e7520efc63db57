/*
 * The hook through which live aggregates (append counters, sums, report
 * totals, personal projects) follow a tenant's state: TenantState calls
 * every observer on each put and removal, in apply and in replay alike, and
 * resets them all when the state is rebuilt.
 */
import type { Rec } from '../domain/record.js'

/** Sees every change: before is undefined on insert, after is undefined on removal. */
export interface StateObserver {
  onChange(type: string, before: Rec | undefined, after: Rec | undefined): void
  /** Whether it reads the records of `type` at all: a snapshot's collection loaded as columns is shown to it record by record only then (TenantState.restoreSteps). */
  follows(type: string): boolean
  /** Forget everything (the state is being rebuilt). */
  reset(): void
}
