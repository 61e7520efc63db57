/*
 * All of one tenant's state: a Collection per declared resource, the log
 * sequence number the state includes, and the observers that keep live
 * aggregates (append counters, sums, report totals) in step with every change.
 * `applyOp` (a write) and `applyEntry` (replaying the log) are the only
 * ways state changes; both are deterministic.
 */
import { inRecordShape, recordFromFields } from '../domain/records.js'
import { RESOURCES, resourceByType } from '../domain/resources/index.js'
import type { LiveAggregates, Rec } from '../domain/schema.js'
import type { StateView } from '../domain/tx.js'
import { assertionFailed } from '../assert.js'
import { AppendCounters } from './appendCounters.js'
import { Collection } from './collection.js'
import { LiveSums } from './liveSums.js'
import { PersonalProjects } from './personalProjects.js'
import { ownCopy } from './textPool.js'
import { ReportAggregates } from './reportTotals.js'
import type { LoggedEntry, Op } from './logEntry.js'
import type { StateObserver } from './stateObserver.js'

export class TenantState implements StateView {
  readonly collections = new Map<string, Collection>()
  /** Sequence number of the last log entry applied. */
  seq = 0
  /**
   * How many changes the state has seen: every put, removal and load,
   * including operations a write applies and then rolls back. Whatever is
   * kept from an earlier look at the state is stale once this has moved.
   */
  changes = 0
  /** Live `append` counters. */
  readonly counters = new AppendCounters()
  /** Live sums over children (bill totals). */
  readonly sums = new LiveSums()
  /** The personal projects (hidden from all but their owners). */
  readonly personalProjects = new PersonalProjects()
  /** Live report totals per day, project and user. */
  readonly reports: ReportAggregates = new ReportAggregates(this)
  private readonly observers: StateObserver[] = [this.counters, this.sums, this.personalProjects, this.reports]
  /** What derived fields read: the live counters and sums. */
  readonly aggregates: LiveAggregates = {
    count: (parentType, counterName, parentId, viewerId) => this.counters.count(parentType, counterName, parentId, viewerId),
    sum: (parentType, sumName, parentId) => this.sums.sum(parentType, sumName, parentId),
  }

  constructor(readonly tenant: string) {
    for (const decl of RESOURCES) this.collections.set(decl.type, new Collection(decl))
  }

  /**
   * References are stored as the very string object of the referenced
   * record's id, so a million time records share 50 user ids instead of
   * holding a million copies. Only a record being put, not yet in the
   * state, is touched (records loaded from a snapshot come shared).
   */
  private internReferences(type: string, rec: Rec): void {
    for (const [name, refType] of this.collection(type).references) {
      const value = rec[name]
      if (typeof value !== 'string') continue
      const target = this.collections.get(refType)?.get(value)
      if (target !== undefined) rec[name] = target.id
    }
  }

  /**
   * A record read from the log gets a copy of its own of each text, its
   * id among them: msgpackr reads the texts of an entry as views into one
   * longer string (the entry's field list included), and a view keeps that
   * string in memory (174–180 bytes of heap a replayed time record) and
   * compares slowly (textPool.ts).
   * References need none: they become the referenced record's own id.
   */
  private ownTexts(collection: Collection, rec: Rec): void {
    for (const name of collection.texts) {
      const value = rec[name]
      if (typeof value === 'string') rec[name] = ownCopy(value)
    }
  }

  /**
   * Loads a record from a snapshot (observers see it as an insert). Its
   * repeated texts, references included, come shared already: the snapshot
   * reader shares them across the file (snapshotFile.ts), once per distinct
   * text rather than once per record. Each collection's finishLoad (or the
   * state's) ends the loading.
   */
  load(type: string, rec: Rec): void {
    this.collection(type).load(rec)
    this.notify(type, undefined, rec)
  }

  /** Ends loading a snapshot: indexes what `load` put in (before anything else reads or writes the state). */
  finishLoad(): void {
    for (const collection of this.collections.values()) collection.finishLoad()
  }

  addObserver(observer: StateObserver): void {
    this.observers.push(observer)
    for (const collection of this.collections.values()) {
      for (const rec of collection.values()) observer.onChange(collection.decl.type, undefined, rec)
    }
  }

  collection(type: string): Collection {
    const collection = this.collections.get(type)
    if (collection === undefined) assertionFailed(`tenant has no collection ${type}`)
    return collection
  }

  get(type: string, id: string): Rec | undefined {
    return this.collections.get(type)?.get(id)
  }

  recordsWith(type: string, fieldName: string, value: unknown): Iterable<Rec> {
    return this.collection(type).lookup(fieldName, value)
  }

  displayNameOf(type: string, id: unknown): string {
    if (typeof id !== 'string') return ''
    const rec = this.get(type, id)
    return rec === undefined ? '' : resourceByType(type).displayName(rec, this)
  }

  /**
   * Replays one entry of the log (tenants/recovery.ts): the state moves to `seq`.
   * Its records are first put in their declaration's shape
   * (recordFromFields, or for format 1 inRecordShape), with texts of their
   * own (ownTexts).
   *
   * A record new to its collection goes in as a snapshot's records do
   * (Collection.loadNew): into the primary index at once, into the
   * secondary and range indexes in bulk at the collection's next
   * finishLoad. Any other operation on that collection runs that
   * finishLoad first, and recovery runs it after the last entry. A log is
   * mostly new time records, and one PostingIndex.addAll for many of them
   * costs a fraction of a put each.
   */
  applyEntry(seq: number, entry: LoggedEntry): void {
    if (seq !== this.seq + 1) assertionFailed(`tenant ${this.tenant}: entry ${seq} applied after ${this.seq}`)
    for (const op of entry.ops) {
      const collection = this.collection(op.type)
      if (op.op !== 'del') {
        const rec = op.op === 'putFields' ? recordFromFields(collection.decl, op.names, op.values) : inRecordShape(collection.decl, op.rec)
        this.ownTexts(collection, rec)
        this.internReferences(op.type, rec)
        if (collection.loadNew(rec)) this.notify(op.type, undefined, rec)
        else {
          collection.finishLoad()
          this.put(collection, rec)
        }
      } else {
        collection.finishLoad()
        this.applyOp(op)
      }
    }
    this.seq = seq
  }

  /** Applies one operation and returns the operation that undoes it. */
  applyOp(op: Op): Op {
    const collection = this.collection(op.type)
    if (op.op === 'put') {
      this.internReferences(op.type, op.rec)
      return this.put(collection, op.rec)
    }
    const before = collection.remove(op.id)
    if (before === undefined) assertionFailed(`tenant ${this.tenant}: del of missing ${op.type} ${op.id}`)
    this.notify(op.type, before, undefined)
    return { op: 'put', type: op.type, rec: before }
  }

  /** Puts a record (references interned) into its collection; the operation that undoes it. */
  private put(collection: Collection, rec: Rec): Op {
    const type = collection.decl.type
    const before = collection.put(rec)
    this.notify(type, before, rec)
    return before === undefined ? { op: 'del', type, id: rec.id } : { op: 'put', type, rec: before }
  }

  private notify(type: string, before: Rec | undefined, after: Rec | undefined): void {
    this.changes += 1
    for (const observer of this.observers) observer.onChange(type, before, after)
  }
}
