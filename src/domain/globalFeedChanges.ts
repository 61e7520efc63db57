/*
 * What a write, or a whole state, feeds to the global indexes and the
 * directory markers (globalFeed.ts), read from the declarations alone: the
 * tenant layer (tenants/globalIndexes.ts) applies what this says to the
 * directory, and names no resource.
 *
 * After a write, every key that a record the write put, replaced or removed
 * is filed under (as it is now, or as it was: the record as it was comes
 * from the write, a logged removal carries only the id) is asked again of
 * the state after the write, so a key several records share (an e-mail a
 * trashed user keeps) is only dropped when none holds it. A marker is set
 * anew only when the write changed the declared predicate of a record it
 * wrote (a webhook created, (de)activated, trashed, restored or removed;
 * not a delivery's own bookkeeping), and then from the whole collection.
 */
import { DIRECTORY_MARKERS, GLOBAL_INDEX_TABLES, type DirectoryMarker, type DirectoryMarkerFeed, type GlobalIndexFeed, type GlobalIndexTable } from './globalFeed.js'
import type { Rec, ResourceDecl } from './schema.js'
import type { StateView } from './tx.js'

/** One operation of a write, as the log holds it (the engine's Op is one). */
type WrittenOp = { readonly op: 'put'; readonly type: string; readonly rec: Rec } | { readonly op: 'del'; readonly type: string; readonly id: string }

/** What the feeds read of a write (the engine's WriteTx is one): its operations, the records they replaced, the state after it. */
export interface WrittenRecords {
  readonly ops: readonly WrittenOp[]
  readonly state: StateView
  /** The records of `type` as they were before each operation of the write that replaced or removed one. */
  previousRecords(type: string): readonly Rec[]
}

export class GlobalFeeds {
  private readonly indexes: ReadonlyMap<string, GlobalIndexFeed>
  private readonly markers: ReadonlyMap<string, DirectoryMarkerFeed>

  constructor(decls: readonly ResourceDecl[]) {
    const indexes = new Map<string, GlobalIndexFeed>()
    const markers = new Map<string, DirectoryMarkerFeed>()
    for (const decl of decls) {
      if (decl.globalIndex !== null) indexes.set(decl.type, decl.globalIndex)
      if (decl.directoryMarker !== null) markers.set(decl.type, decl.directoryMarker)
    }
    this.indexes = indexes
    this.markers = markers
  }

  /** Calls `filed` once for each index key the write touched, with whether the state after the write holds a record under it. */
  forEachKeyWritten(write: WrittenRecords, filed: (table: GlobalIndexTable, key: string, held: boolean) => void): void {
    for (const [type, feed] of this.indexes) {
      if (!write.ops.some((op) => op.type === type)) continue
      const keys = new Set<string>()
      for (const op of write.ops) if (op.type === type && op.op === 'put') addKey(keys, feed.keyOf(op.rec))
      for (const previous of write.previousRecords(type)) addKey(keys, feed.keyOf(previous))
      for (const key of keys) filed(feed.table, key, feed.heldIn(write.state, key))
    }
  }

  /** Calls `marked` once for each directory marker the write may have turned, with its value after the write. */
  forEachMarkerTurned(write: WrittenRecords, marked: (marker: DirectoryMarker, on: boolean) => void): void {
    for (const [type, feed] of this.markers) {
      if (write.ops.some((op) => op.type === type) && markerTurned(write, type, feed)) marked(feed.marker, markerSetIn(write.state, type, feed))
    }
  }

  /** Every key the state holds, per table (empty for a table nothing here feeds). */
  keysOf(state: StateView): Record<GlobalIndexTable, Set<string>> {
    const held = Object.fromEntries(GLOBAL_INDEX_TABLES.map((table) => [table, new Set<string>()])) as Record<GlobalIndexTable, Set<string>>
    for (const [type, feed] of this.indexes) {
      for (const rec of state.collection(type).values()) {
        const key = feed.keyOf(rec)
        if (key !== null && feed.heldIn(state, key)) held[feed.table].add(key)
      }
    }
    return held
  }

  /** Every marker's value for the state (false for a marker nothing here sets). */
  markersOf(state: StateView): Record<DirectoryMarker, boolean> {
    const markers = Object.fromEntries(DIRECTORY_MARKERS.map((marker) => [marker, false])) as Record<DirectoryMarker, boolean>
    for (const [type, feed] of this.markers) if (markerSetIn(state, type, feed)) markers[feed.marker] = true
    return markers
  }
}

function addKey(keys: Set<string>, key: string | null): void {
  if (key !== null) keys.add(key)
}

function markerSetIn(state: StateView, type: string, feed: DirectoryMarkerFeed): boolean {
  for (const rec of state.collection(type).values()) if (feed.sets(rec)) return true
  return false
}

/** Whether the write changed the predicate of a record of `type` it wrote (created, changed, removed). */
function markerTurned(write: WrittenRecords, type: string, feed: DirectoryMarkerFeed): boolean {
  const before = new Map<string, Rec>()
  for (const rec of write.previousRecords(type)) if (!before.has(rec.id)) before.set(rec.id, rec)
  const sets = (rec: Rec | undefined): boolean => rec !== undefined && feed.sets(rec)
  for (const op of write.ops) {
    if (op.type !== type) continue
    const id = op.op === 'put' ? op.rec.id : op.id
    if (sets(before.get(id)) !== sets(write.state.get(type, id))) return true
  }
  return false
}
