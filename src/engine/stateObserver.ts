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
  /** Forget everything (the state is being rebuilt). */
  reset(): void
}
