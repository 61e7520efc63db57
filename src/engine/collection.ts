/*
 * One resource's records in a tenant: a primary index by id, a secondary
 * index (value → ids) for every indexed field of the declaration, and a
 * day-bucketed range index for every range-indexed date field. Only
 * TenantState calls put/remove, and only from apply.
 */
import type { Rec, ResourceDecl } from '../domain/schema.js'
import { DateBuckets } from './dateBuckets.js'

type SecondaryIndex = Map<unknown, Set<string>>

export class Collection {
  readonly byId = new Map<string, Rec>()
  private readonly indexes = new Map<string, SecondaryIndex>()
  readonly rangeIndexes = new Map<string, DateBuckets>()

  constructor(readonly decl: ResourceDecl) {
    for (const fieldDecl of decl.fields) {
      if (fieldDecl.indexed) this.indexes.set(fieldDecl.name, new Map())
      if (fieldDecl.rangeIndexed) this.rangeIndexes.set(fieldDecl.name, new DateBuckets(fieldDecl.name))
    }
  }

  get size(): number {
    return this.byId.size
  }

  get(id: string): Rec | undefined {
    return this.byId.get(id)
  }

  /** Inserts or replaces; returns the record it replaced. */
  put(rec: Rec): Rec | undefined {
    const before = this.byId.get(rec.id)
    this.byId.set(rec.id, rec)
    for (const [name, index] of this.indexes) {
      const oldValue = before?.[name] ?? null
      const newValue = rec[name] ?? null
      if (before !== undefined && oldValue === newValue) continue
      if (before !== undefined) removeFromIndex(index, oldValue, rec.id)
      addToIndex(index, newValue, rec.id)
    }
    for (const [name, buckets] of this.rangeIndexes) {
      if (before !== undefined && before[name] === rec[name]) continue
      if (before !== undefined) buckets.remove(before)
      buckets.add(rec)
    }
    return before
  }

  remove(id: string): Rec | undefined {
    const before = this.byId.get(id)
    if (before === undefined) return undefined
    this.byId.delete(id)
    for (const [name, index] of this.indexes) removeFromIndex(index, before[name] ?? null, id)
    for (const buckets of this.rangeIndexes.values()) buckets.remove(before)
    return before
  }

  hasIndex(fieldName: string): boolean {
    return this.indexes.has(fieldName)
  }

  /** Records whose indexed field equals the value (null matches a missing value). */
  *lookup(fieldName: string, value: unknown): IterableIterator<Rec> {
    const index = this.indexes.get(fieldName)
    if (index === undefined) throw new Error(`${this.decl.type}.${fieldName} has no index`)
    const ids = index.get(value ?? null)
    if (ids === undefined) return
    for (const id of ids) {
      const rec = this.byId.get(id)
      if (rec !== undefined) yield rec
    }
  }

  countOf(fieldName: string, value: unknown): number {
    return this.indexes.get(fieldName)?.get(value ?? null)?.size ?? 0
  }

  values(): IterableIterator<Rec> {
    return this.byId.values()
  }
}

function addToIndex(index: SecondaryIndex, value: unknown, id: string): void {
  let ids = index.get(value)
  if (ids === undefined) {
    ids = new Set()
    index.set(value, ids)
  }
  ids.add(id)
}

function removeFromIndex(index: SecondaryIndex, value: unknown, id: string): void {
  const ids = index.get(value)
  if (ids === undefined) return
  ids.delete(id)
  if (ids.size === 0) index.delete(value)
}
