/*
 * All of one tenant's state: a Collection per declared resource, the log
 * sequence number the state includes, and the observers that keep live
 * aggregates (append counters, sums, report totals) in step with every change.
 * `applyOp` (a write) and `applyEntry` (replaying the log) are the only
 * ways state changes; both are deterministic.
 */
import { inRecordShape, recordFromFields } from '../domain/recordMaking.js'
import { RESOURCES, resourceByType } from '../domain/resources/index.js'
import type { LiveAggregates, Rec } from '../domain/schema.js'
import type { TenantView } from '../domain/tx.js'
import { assertionFailed } from '../assert.js'
import { AppendCounters } from './appendCounters.js'
import { NOT_AS_FIELDS } from './fieldsPlans.js'
import { Collection, INDEX_STEP_RECORDS } from './collection.js'
import { LiveSums } from './liveSums.js'
import { PersonalProjects } from './personalProjects.js'
import { StringPool } from './stringPool.js'
import { ReportAggregates } from './reportTotals.js'
import type { LoggedEntry, Op } from './logEntry.js'
import type { StateObserver } from './stateObserver.js'
import { runNow, type Steps } from './steps.js'
import type { PoolImage, TableImage } from './tableImage.js'
import { imageRecords } from './imageRecords.js'

/** Rows [from, to) of one collection, inserted in that order. */
interface InsertedRun {
  readonly collection: Collection
  from: number
  to: number
}

export class TenantState implements TenantView {
  readonly collections = new Map<string, Collection>()
  /** The texts and references of every collection's columns (stringPool.ts). */
  readonly pool = new StringPool()
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
  /** Runs of rows applyEntry inserted that the observers have not seen yet, in order, all of one collection; how many rows they hold. */
  private readonly unseen: InsertedRun[] = []
  private unseenCount = 0
  /** What derived fields read: the live counters and sums. */
  readonly aggregates: LiveAggregates = {
    count: (parentType, counterName, parentId, viewerId) => this.counters.count(parentType, counterName, parentId, viewerId),
    sum: (parentType, sumName, parentId) => this.sums.sum(parentType, sumName, parentId),
  }

  constructor(readonly tenant: string) {
    for (const decl of RESOURCES) this.collections.set(decl.type, new Collection(decl, INDEX_STEP_RECORDS, this.pool))
  }

  /**
   * Loads a record from a snapshot (observers see it as an insert). Its
   * texts and references go into the tenant's string pool, once per
   * distinct text. Each collection's finishLoad (or the state's) ends the
   * loading.
   */
  load(type: string, rec: Rec): void {
    this.collection(type).load(rec)
    this.notify(type, undefined, rec)
  }

  /** Begins loading a snapshot that stores columns: the tenant's texts at their codes (StringPool.restore), before its collections. */
  *restorePoolSteps(image: PoolImage): Steps<void> {
    yield* this.pool.restoreSteps(image)
  }

  /**
   * Loads a snapshot's collection stored as columns (tableImage.ts): the columns are taken as they are
   * (Collection.restoreSteps), or, when the declaration's fields changed since the snapshot, its records are made from
   * them and loaded one by one (imageRecords.ts). Observers see the records only when they follow the type
   * (StateObserver.follows) and do not take what they need from the columns (StateObserver.takeLoadedSteps). Pauses every `stepRecords` records made; answers the records loaded.
   */
  *restoreSteps(image: TableImage, stepRecords: number): Steps<number> {
    const { type } = image
    const collection = this.collection(type)
    let made = 0
    if (!collection.table.fitsImage(image)) {
      for (const rec of imageRecords(image, this.pool)) {
        this.load(type, rec)
        if (++made % stepRecords === 0) yield
      }
      return made
    }
    yield* collection.restoreSteps(image)
    this.changes += 1
    const shown: StateObserver[] = []
    for (const observer of this.observers) {
      if (!observer.follows(type)) continue
      const taken = observer.takeLoadedSteps === undefined ? false : yield* observer.takeLoadedSteps(type, collection)
      if (!taken) shown.push(observer)
    }
    if (shown.length > 0) {
      for (const rec of collection.values()) {
        for (const observer of shown) observer.onChange(type, undefined, rec)
        if (++made % stepRecords === 0) yield
      }
    }
    return collection.size
  }

  /** Ends loading a snapshot that stores columns: the codes no row holds are free (StringPool.finishRestoreSteps). */
  *finishRestoreSteps(): Steps<void> {
    yield* this.pool.finishRestoreSteps()
  }

  /** Ends loading a snapshot, or replaying entries: indexes what `load` or applyEntry put in, which the observers see (before anything else reads or writes the state). */
  finishLoad(): void {
    runNow(this.finishReplaySteps())
  }

  addObserver(observer: StateObserver): void {
    this.seeInserted()
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
   *
   * A record new to its collection goes in as a snapshot's records do: into the table and the primary index at
   * once, into the secondary and range indexes in bulk at the collection's next finishLoad (Collection.loadNew).
   * Logged as field names and values (formats 2 on), it is written to the columns as it lies in the entry, without
   * making a record (Collection.loadNewFields); otherwise it is first put in its declaration's shape
   * (recordFromFields, or for format 1 inRecordShape). The observers see the new records later too, in bulk and in
   * the order they came (`seeInsertedSteps`: an observer that can takes them from the columns, StateObserver.takeRows).
   * The records waiting are always of one collection (a new record of another shows them first), so that an
   * observer told of them finds every other collection as it was when they came (ReportAggregates reads how many
   * time records there are when the account changes). Any other operation first lets the observers see every
   * record inserted before it, and runs its collection's
   * finishLoad; recovery sees and indexes the rest after the last entry (finishReplaySteps). A log is mostly new
   * time records, and one PostingIndex.addRows, or one pass of the report totals over a run of rows, costs a
   * fraction of a put each.
   */
  applyEntry(seq: number, entry: LoggedEntry): void {
    if (seq !== this.seq + 1) assertionFailed(`tenant ${this.tenant}: entry ${seq} applied after ${this.seq}`)
    for (const op of entry.ops) {
      const collection = this.collection(op.type)
      if (op.op === 'putFields') {
        // The rows waiting are one collection's: an observer told of another's sees every other collection as it was then.
        if (this.unseen[0] !== undefined && this.unseen[0].collection !== collection) this.seeInserted()
        const row = collection.loadNewFields(op.names, op.values)
        if (row >= 0) {
          this.inserted(collection, row)
          continue
        }
        if (row !== NOT_AS_FIELDS) {
          this.seeInserted()
          collection.finishLoad()
          this.put(collection, recordFromFields(collection.decl, op.names, op.values))
          continue
        }
      }
      this.seeInserted()
      if (op.op !== 'del') {
        const rec = op.op === 'putFields' ? recordFromFields(collection.decl, op.names, op.values) : inRecordShape(collection.decl, op.rec)
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

  /** Rows the log's entries inserted that the observers have not seen yet (applyEntry). */
  get unseenRows(): number {
    return this.unseenCount
  }

  /** A row applyEntry inserted: the observers see it with the others at the next seeInsertedSteps. */
  private inserted(collection: Collection, row: number): void {
    this.changes += 1
    this.unseenCount += 1
    const last = this.unseen[this.unseen.length - 1]
    if (last !== undefined && last.collection === collection && last.to === row) last.to = row + 1
    else this.unseen.push({ collection, from: row, to: row + 1 })
  }

  /** seeInsertedSteps at once. */
  private seeInserted(): void {
    if (this.unseenCount > 0) runNow(this.seeInsertedSteps())
  }

  /**
   * The observers see the records applyEntry inserted, in the order they came, as steps of at most
   * INDEX_STEP_RECORDS rows: each observer that follows their type takes a run of rows from the columns
   * (StateObserver.takeRows), or is shown each record, made from its row.
   */
  *seeInsertedSteps(): Steps<void> {
    while (this.unseen.length > 0) {
      const run = this.unseen[0] as InsertedRun
      const { collection, from } = run
      const to = Math.min(run.to, from + INDEX_STEP_RECORDS)
      const type = collection.decl.type
      for (const observer of this.observers) {
        if (!observer.follows(type) || observer.takeRows?.(type, collection, from, to) === true) continue
        for (let row = from; row < to; row += 1) if (collection.table.isLive(row)) observer.onChange(type, undefined, collection.table.record(row))
      }
      this.unseenCount -= to - from
      if (to === run.to) this.unseen.shift()
      else run.from = to
      if (this.unseen.length > 0) yield
    }
  }

  /** Ends a replay (tenants/recovery.ts): the observers see the records inserted, and every collection indexes them. */
  *finishReplaySteps(): Steps<void> {
    yield* this.seeInsertedSteps()
    for (const collection of this.collections.values()) yield* collection.finishLoadSteps()
  }

  /** Applies one operation and returns the operation that undoes it. */
  applyOp(op: Op): Op {
    this.seeInserted()
    const collection = this.collection(op.type)
    if (op.op === 'put') return this.put(collection, op.rec)
    const before = collection.remove(op.id)
    if (before === undefined) assertionFailed(`tenant ${this.tenant}: del of missing ${op.type} ${op.id}`)
    this.notify(op.type, before, undefined)
    return { op: 'put', type: op.type, rec: before }
  }

  /** Puts a record into its collection; the operation that undoes it. */
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
