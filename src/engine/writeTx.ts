/*
 * A write in progress. Request handlers decide a write against the current
 * state and express it as primitive operations through put/del; each
 * operation is applied at once (later decisions in the same write see it)
 * and remembered with its inverse. If the handler throws, rollback() undoes
 * every operation in reverse, leaving the state exactly as before; if it
 * succeeds, `ops` is what goes to the log. Savepoints let a batch roll back
 * one transaction group and keep the others. Bytes the write stores beside
 * its log entry (an upload's) are handed over with storeBeside (refused at
 * once when the store has no room for them) and removed ones named with
 * removeBeside; `beside` keeps them, in order, for the tenant layer to store
 * in the commit of the entry (tenants/besideWrites.ts). A rollback to a
 * savepoint forgets those named after it, so a refused write stores nothing.
 *
 * A removal of a record whose changes are events is logged with who could
 * see it just before (domain/changes.ts removalAudienceText), judged on the
 * state as the write left it so far, with the records it removed earlier
 * still in view: a cascade that removes a personal project before what
 * belongs to it (or an object before its trash item) still judges the
 * later removals by it.
 *
 * Who made the write (`by`: the signed-in user's id, set through `actAs`
 * by the call that decides it; null for a write no user made) goes in its
 * log entry, and a put that replaces a record whose changes are events
 * carries the fields it changed with their values before
 * (domain/fieldChanges.ts): the history of an object tells both. A put of
 * a new record (a create) costs nothing more.
 */
import { eventResourceOf, removalAudienceText } from '../domain/changes.js'
import { changedFields } from '../domain/fieldChanges.js'
import type { DisplayContext } from '../domain/record.js'
import { findResourceByType } from '../domain/resources/index.js'
import type { Rec } from '../domain/schema.js'
import type { Tx } from '../domain/tx.js'
import { assertionFailed } from '../assert.js'
import type { Op } from './logEntry.js'
import type { TenantState } from './tenantState.js'

/** Whether changes of records of `type` are events (so the history tells them): by type, worked out once. */
const typesWithEvents = new Map<string, boolean>()

function eventsOf(type: string): boolean {
  let events = typesWithEvents.get(type)
  if (events === undefined) {
    const decl = findResourceByType(type)
    events = decl !== undefined && eventResourceOf(decl) !== null
    typesWithEvents.set(type, events)
  }
  return events
}

/** Bytes a write stores (or, null, removes) beside its log entry under `key`; `namedAt`: its operations then. */
export interface BesideWrite {
  readonly key: string
  readonly bytes: Uint8Array | null
  readonly namedAt: number
}

export class WriteTx implements Tx {
  readonly ops: Op[] = []
  private readonly undo: Op[] = []
  /** What this write stores (bytes) or removes (null) beside its log entry, in the order named. */
  readonly beside: BesideWrite[] = []
  /** Bytes this write stores beside its log entry (storeBeside). */
  storedBytes = 0
  /** The id of the signed-in user who makes this write; null when none does (see the top). */
  by: string | null = null
  /** The state's sequence number when the write opened: nothing is logged on the state while the write is open. */
  private readonly openedAtSeq: number

  /**
   * `now` is the one timestamp of this write (epoch ms): every createdAt/updatedAt it sets. `checkRoom` throws when
   * the store has no room for that many bytes (the actor's; a batch, which stores nothing beside its entries, has none).
   */
  constructor(
    readonly state: TenantState,
    readonly now: number,
    private readonly checkRoom: (bytes: number) => void = () => undefined,
  ) {
    this.openedAtSeq = state.seq
  }

  /** A write applies to (and undoes on) the state as it opened it: one committed since (its own entry) ends it. */
  private assertOpen(what: string): void {
    if (this.state.seq !== this.openedAtSeq) assertionFailed(`tenant ${this.state.tenant}: ${what} on a write opened at ${this.openedAtSeq}, the state is at ${this.state.seq}`)
  }

  /**
   * Keeps bytes the write stores beside its log entry (an uploaded file's) under `key`: refused (thrown, and the
   * write rolled back) when they do not fit under LMDB_MAP_SIZE_BYTES.
   */
  storeBeside(key: string, bytes: Uint8Array): void {
    this.checkRoom(bytes.length)
    this.nameBeside(key, bytes)
    this.storedBytes += bytes.length
  }

  /** Names bytes kept beside the log under `key` that this write removes. */
  removeBeside(key: string): void {
    this.nameBeside(key, null)
  }

  private nameBeside(key: string, bytes: Uint8Array | null): void {
    this.assertOpen('a write beside the log')
    if (this.beside.some((named) => named.key === key)) assertionFailed(`tenant ${this.state.tenant}: the bytes under ${key} are named twice in one write`)
    this.beside.push({ key, bytes, namedAt: this.ops.length })
  }

  /** Names the signed-in user who makes this write (the log entry's `by`). */
  actAs(userId: string): void {
    this.by = userId
  }

  put(type: string, rec: Rec): void {
    this.assertOpen('put')
    const op: Extract<Op, { op: 'put' }> = { op: 'put', type, rec }
    const inverse = this.state.applyOp(op)
    this.undo.push(inverse)
    this.ops.push(op)
    if (inverse.op === 'put' && eventsOf(type)) {
      const was = changedFields(inverse.rec, rec)
      if (was !== null) op.was = was
    }
  }

  del(type: string, id: string): void {
    this.assertOpen('del')
    const seenBy = this.audienceBeforeRemoval(type, id)
    const op: Op = seenBy === undefined ? { op: 'del', type, id } : { op: 'del', type, id, seenBy }
    const inverse = this.state.applyOp(op)
    this.undo.push(inverse)
    this.ops.push(op)
    if (inverse.op === 'put' && seenBy !== undefined) this.removedOf(type).set(id, inverse.rec)
  }

  /** Records whose changes are events this write removed so far, by type and id, for judging later removals (see the top). */
  private removed: Map<string, Map<string, Rec>> | null = null

  private removedOf(type: string): Map<string, Rec> {
    this.removed ??= new Map()
    let ofType = this.removed.get(type)
    if (ofType === undefined) {
      ofType = new Map()
      this.removed.set(type, ofType)
    }
    return ofType
  }

  /** For a record whose changes are events: who could see it before this removal, as the log keeps it. */
  private audienceBeforeRemoval(type: string, id: string): string | undefined {
    const decl = findResourceByType(type)
    const rec = this.state.get(type, id)
    if (decl === undefined || rec === undefined || eventResourceOf(decl) === null) return undefined
    if (this.removed === null) return removalAudienceText(decl, rec, this.state)
    if (this.stateWithRemoved === null) this.stateWithRemoved = this.withRemoved(this.removed)
    return removalAudienceText(decl, rec, this.stateWithRemoved)
  }

  /** The state with the records this write removed still in view (made at its first removal that needs it). */
  private stateWithRemoved: DisplayContext | null = null

  private withRemoved(removed: ReadonlyMap<string, ReadonlyMap<string, Rec>>): DisplayContext {
    const { state } = this
    return {
      get: (type, id) => state.get(type, id) ?? removed.get(type)?.get(id),
      displayNameOf: (type, id) => state.displayNameOf(type, id),
    }
  }

  /** The records of `type` this write removed or replaced, as they were before (each such `del`'s or `put`'s inverse). */
  previousRecords(type: string): Rec[] {
    const previous: Rec[] = []
    this.ops.forEach((op, index) => {
      const inverse = this.undo[index]
      if (op.type === type && inverse?.op === 'put') previous.push(inverse.rec)
    })
    return previous
  }

  savepoint(): number {
    return this.ops.length
  }

  rollbackTo(savepoint: number): void {
    this.assertOpen('rollback')
    if (!(savepoint >= 0 && savepoint <= this.ops.length)) assertionFailed(`rollback to savepoint ${savepoint} of a write with ${this.ops.length} operations`)
    while (this.ops.length > savepoint) {
      const inverse = this.undo.pop()
      const op = this.ops.pop()
      if (op?.op === 'del') this.removed?.get(op.type)?.delete(op.id)
      if (inverse !== undefined) this.state.applyOp(inverse)
    }
    if (this.undo.length !== savepoint) assertionFailed(`rollback to ${savepoint} left ${this.undo.length} inverses for ${this.ops.length} operations`)
    while ((this.beside.at(-1)?.namedAt ?? -1) >= savepoint) this.storedBytes -= this.beside.pop()?.bytes?.length ?? 0
  }

  rollback(): void {
    this.rollbackTo(0)
  }
}
