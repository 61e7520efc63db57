/*
 * A stored object as the domain and the engine hold it in memory, and what a
 * display name or derived field may consult besides it. In memory a stored
 * object is a `Rec`: scalar fields as JSON values, dates as epoch
 * milliseconds, references as the referenced id (or null). These types sit
 * in a file of their own so that the narrow views of the state (tx.ts) and
 * the declarations (schema.ts) can both name them without importing each
 * other.
 */

export type Rec = {
  id: string
  version: number
  createdAt: number
  updatedAt: number
  trashItem: string | null
  [field: string]: unknown
}

/** Live aggregates the engine keeps in step with every change (never a scan per request). */
export interface LiveAggregates {
  /** The value of an `append` counter of a parent, as the user `viewerId` sees it. */
  count(parentType: string, counterName: string, parentId: string, viewerId: string): number
  /** The value of a declared LiveSum of a parent. */
  sum(parentType: string, sumName: string, parentId: string): number
}

/** What a display name or a derived field may consult: other records (a time record shows its user's name). */
export interface DisplayContext {
  get(type: string, id: string): Rec | undefined
  /** The display name of the referenced object, '' when the reference is empty or dangling. */
  displayNameOf(type: string, id: unknown): string
  /** Live aggregates; absent where there is no engine (unit tests with a fake context). */
  readonly aggregates?: LiveAggregates
  /** The records of `type` whose indexed field holds `value` (a bill lists its items); absent where there is no engine. */
  recordsWith?(type: string, fieldName: string, value: unknown): Iterable<Rec>
}
