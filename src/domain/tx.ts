/*
 * The tenant's state as the domain sees it: narrow interfaces, so that the
 * domain depends on what it uses and not on the engine's classes. A read
 * gets a StateView (records by id, a collection's records and its index
 * lookups); a write gets a Tx: the same view of the state as the write has
 * changed it so far, the one timestamp of the write, and the two primitive
 * operations, put and del, each applied at once (later decisions in the
 * same write see it). The engine's TenantState and WriteTx implement them
 * (engine/tenantState.ts, engine/writeTx.ts); a test may build a Tx the same
 * way, over a fresh TenantState.
 *
 * The HTTP layer sees no more of the tenant than these either: a read gets a
 * TenantView (a StateView with the live aggregates and where the state is in
 * the log), which a route hands on to the query layer and the domain; a write
 * gets the Tx, on which the call names its user (actAs) and an upload
 * hands over its bytes (storeBeside), which the tenant layer stores with the
 * write's log entry. What is behind them may change (the
 * record store) without a route knowing.
 */
import type { DisplayContext, LiveAggregates, Rec } from './record.js'

/** A collection's records: all of them, or those with a value in an indexed field. */
interface RecordsView {
  /** How many records the collection holds (trashed ones included). */
  readonly size: number
  values(): IterableIterator<Rec>
  /** The records whose indexed field `fieldName` holds `value` (a live view: copy it before deleting while iterating). */
  lookup(fieldName: string, value: unknown): Iterable<Rec>
}

/** A read-only view of one tenant's state. */
export interface StateView extends DisplayContext {
  /** The tenant's name. */
  readonly tenant: string
  collection(type: string): RecordsView
  /** Every collection by type (those with records or declared). */
  readonly collections: ReadonlyMap<string, RecordsView>
}

/** What a route reads of a tenant's state: the StateView, its live aggregates and its place in the log. */
export interface TenantView extends StateView {
  /** Sequence number of the last log entry the state includes. */
  readonly seq: number
  /** How many changes the state has seen (rolled back ones included): whatever is kept from an earlier look is stale once it moves. */
  readonly changes: number
  /** The live counters and sums derived fields read (append counters, bill totals). */
  readonly aggregates: LiveAggregates
}

/** A write in progress (engine/writeTx.ts has the mechanism: undo, savepoints, what goes to the log). */
export interface Tx {
  /** The state with this write's operations applied so far. */
  readonly state: TenantView
  /** The one timestamp of this write (epoch ms): every createdAt/updatedAt it sets. */
  readonly now: number
  put(type: string, rec: Rec): void
  del(type: string, id: string): void
  /**
   * Stores bytes beside this write's log entry under `key` (an upload's), in the same commit as the entry: nothing
   * is stored when the write is rolled back. Throws (the write is refused) when the store has no room for them.
   */
  storeBeside(key: string, bytes: Uint8Array): void
  /** Removes the bytes kept under `key` (a replaced or removed upload's), in the same commit as this write's entry. */
  removeBeside(key: string): void
  /** Names the signed-in user who makes this write (its log entry's `by`). */
  actAs(userId: string): void
}
