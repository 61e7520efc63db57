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
 */
import type { DisplayContext, Rec } from './record.js'

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

/** A write in progress (engine/writeTx.ts has the mechanism: undo, savepoints, what goes to the log). */
export interface Tx {
  /** The state with this write's operations applied so far. */
  readonly state: StateView
  /** The one timestamp of this write (epoch ms): every createdAt/updatedAt it sets. */
  readonly now: number
  put(type: string, rec: Rec): void
  del(type: string, id: string): void
  /** Declares bytes stored beside the log entry (an upload's), before they are put; throws when they do not fit. */
  storeBeside(bytes: number): void
}
