/*
 * One resource's records in a tenant: a primary index by id
 * (recordTable.ts: sharded once large, so it never rehashes a million
 * entries at once), a secondary index (value → records) of the non-null
 * values of every indexed field of the declaration (null is the common case
 * of an optional reference, and an index of it would hold most of the
 * collection), and a day-bucketed range index for every range-indexed date
 * field. A declaration's `indexOrder` makes each value's records of the
 * secondary indexes readable in that date's order (sortedRecords.ts), from
 * either end (`orderedLookup`); otherwise they are kept as added. The
 * secondary and range indexes hold the record objects (postingIndex.ts says
 * why), so every put replaces the former version in each of them, whether
 * its value there changed or not: an index never gives a record that is not
 * the one in the primary index. Only TenantState calls put/remove, and only
 * from apply; and load/finishLoad, when a snapshot is loaded.
 */
import type { Rec, ResourceDecl } from '../domain/schema.js'
import { assertionFailed } from '../assert.js'
import { AddedRecords } from './addedRecords.js'
import { DateBuckets } from './dateBuckets.js'
import { PostingIndex } from './postingIndex.js'
import { RecordTable } from './recordTable.js'
import { SortedRecords } from './sortedRecords.js'
import { runNow, type Steps } from './steps.js'

/** Loaded records one step of finishLoadSteps adds to one index (about 10 ms for time records). */
export const INDEX_STEP_RECORDS = 65_536

export class Collection {
  private readonly byId = new RecordTable()
  private readonly indexes = new Map<string, PostingIndex<unknown, AddedRecords | SortedRecords>>()
  readonly rangeIndexes = new Map<string, DateBuckets>()
  /** Records loaded (load) and not yet indexed (finishLoad). */
  private loading: Rec[] = []
  /** Reference fields and the type each refers to. */
  readonly references: readonly (readonly [string, string])[]
  /** Stored text fields, the id among them. */
  readonly texts: readonly string[]

  /** `indexStepRecords` other than the default is for tests (many steps from few records). */
  constructor(
    readonly decl: ResourceDecl,
    private readonly indexStepRecords = INDEX_STEP_RECORDS,
  ) {
    this.references = decl.fields.filter((fieldDecl) => fieldDecl.ref !== undefined).map((fieldDecl) => [fieldDecl.name, fieldDecl.ref as string] as const)
    this.texts = decl.fields.filter((fieldDecl) => fieldDecl.type === 'String' && !fieldDecl.computed).map((fieldDecl) => fieldDecl.name)
    const indexOrder = decl.indexOrder
    const newSet = (): AddedRecords | SortedRecords => (indexOrder === null ? new AddedRecords() : new SortedRecords(indexOrder))
    for (const fieldDecl of decl.fields) {
      if (fieldDecl.indexed) this.indexes.set(fieldDecl.name, new PostingIndex(newSet))
      if (fieldDecl.rangeIndexed) this.rangeIndexes.set(fieldDecl.name, new DateBuckets(fieldDecl.name))
    }
  }

  get size(): number {
    return this.byId.size
  }

  get(id: string): Rec | undefined {
    return this.byId.get(id)
  }

  /**
   * Inserts a record of a snapshot being loaded. It is in the primary map at
   * once; the secondary and range indexes get the loaded records in one go
   * at finishLoad (PostingIndex.addAll), which must come before any other use.
   */
  load(rec: Rec): void {
    if (!this.loadNew(rec)) assertionFailed(`${this.decl.type} ${rec.id} loaded twice`)
  }

  /** Loads a record as `load` does when its id is new (replaying the log: TenantState.applyEntry); false, and nothing changed, when the id is there. */
  loadNew(rec: Rec): boolean {
    if (!this.byId.insert(rec)) return false
    this.loading.push(rec)
    return true
  }

  /** Indexes the records loaded since the last finishLoad. */
  finishLoad(): void {
    runNow(this.finishLoadSteps())
  }

  /**
   * finishLoad as steps: each adds at most indexStepRecords of the loaded
   * records to one index (a million time records took 140–170 ms an index
   * in one step, the longest hold of the event loop while a tenant loaded).
   */
  *finishLoadSteps(): Steps<void> {
    const loading = this.loading
    if (loading.length === 0) return
    for (const [name, index] of this.indexes) yield* this.inSteps(loading, (recs) => index.addAll(recs, (rec) => rec[name] ?? null))
    for (const buckets of this.rangeIndexes.values()) yield* this.inSteps(loading, (recs) => buckets.addAll(recs))
    this.loading = []
  }

  /**
   * After a snapshot's records are indexed (finishLoadSteps), gives back the
   * room the indexes' arrays took beyond their records while they grew (an
   * array grown by pushes keeps up to half its length free): 10 bytes of
   * heap a time record, on a million. An index a step. Not after a replay:
   * a log of changes would copy a key's records at each finishLoad.
   */
  *trimSteps(): Steps<void> {
    if (this.byId.size === 0) return
    for (const index of [...this.indexes.values(), ...this.rangeIndexes.values()]) {
      index.trim()
      yield
    }
  }

  /** `add` over `recs`, indexStepRecords at a time, pausing after each. */
  private *inSteps(recs: readonly Rec[], add: (recs: Rec[]) => void): Steps<void> {
    for (let from = 0; from < recs.length; from += this.indexStepRecords) {
      add(recs.slice(from, from + this.indexStepRecords))
      yield
    }
  }

  private assertIndexed(use: string): void {
    if (this.loading.length !== 0) assertionFailed(`${this.decl.type}: ${use} before the loaded records were indexed`)
  }

  /** Inserts or replaces; returns the record it replaced. */
  put(rec: Rec): Rec | undefined {
    this.assertIndexed('put')
    const before = this.byId.set(rec)
    for (const [name, index] of this.indexes) {
      const oldValue = before?.[name] ?? null
      const newValue = rec[name] ?? null
      if (before !== undefined && oldValue === newValue) {
        if (newValue !== null) index.replace(newValue, before, rec)
        continue
      }
      if (oldValue !== null) index.remove(oldValue, before as Rec)
      if (newValue !== null) index.add(newValue, rec)
    }
    for (const buckets of this.rangeIndexes.values()) {
      if (before === undefined) buckets.add(rec)
      else buckets.replace(before, rec)
    }
    return before
  }

  remove(id: string): Rec | undefined {
    this.assertIndexed('remove')
    const before = this.byId.delete(id)
    if (before === undefined) return undefined
    for (const [name, index] of this.indexes) {
      const value = before[name] ?? null
      if (value !== null) index.remove(value, before)
    }
    for (const buckets of this.rangeIndexes.values()) buckets.remove(before)
    return before
  }

  hasIndex(fieldName: string): boolean {
    return this.indexes.has(fieldName)
  }

  /** Records whose indexed field equals the value (null matches a missing value, by a scan); not to be changed while read. */
  lookup(fieldName: string, value: unknown): Iterable<Rec> {
    this.assertIndexed('lookup')
    const index = this.indexes.get(fieldName)
    if (index === undefined) throw new Error(`${this.decl.type}.${fieldName} has no index`)
    return value === null || value === undefined ? this.withoutValue(fieldName) : index.records(value)
  }

  /**
   * The records whose indexed field equals the (non-null) value, in the
   * order of `$orderby=<orderField>` (descending with `desc`), or null when
   * that index does not keep its records in that order (or has too many
   * of them to put in order now: SortedRecords.inOrder).
   */
  orderedLookup(fieldName: string, value: unknown, orderField: string, descending: boolean): Iterable<Rec> | null {
    this.assertIndexed('orderedLookup')
    if (this.decl.indexOrder !== orderField || value === null || value === undefined) return null
    const index = this.indexes.get(fieldName)
    if (index === undefined) return null
    const set = index.setOf(value)
    if (set === undefined) return []
    if (!(set instanceof SortedRecords)) assertionFailed(`${this.decl.type}.${fieldName}: an index of a collection with an index order keeps records without it`)
    return set.inOrder(descending)
  }

  private *withoutValue(fieldName: string): IterableIterator<Rec> {
    for (const rec of this.byId.values()) if ((rec[fieldName] ?? null) === null) yield rec
  }

  /** How many records a lookup visits: the index entry, or the whole collection for null. */
  countOf(fieldName: string, value: unknown): number {
    if (value === null || value === undefined) return this.byId.size
    return this.indexes.get(fieldName)?.count(value) ?? 0
  }

  values(): IterableIterator<Rec> {
    return this.byId.values()
  }
}
