/*
 * A value → records index (the secondary indexes of a collection, the day
 * buckets of a range index): each key's records are a record set, either
 * in the order they were added (addedRecords.ts) or in the order of a date
 * field (sortedRecords.ts), and a key goes when its last record does.
 *
 * It holds the record objects themselves, not their ids: a list pinned to
 * a project reads the project's records straight from here. Holding ids
 * cost a lookup in the collection's primary Map per record, and in a Map
 * of a million entries each lookup is a few cache misses: on a million
 * time records, a page of 100 of a project's 2,002 records sorted by start
 * took 5–6 ms of server time with ids, 0.6–2.3 ms with records. The
 * price is that a record replaced by a new version (every update makes a
 * new object) must be replaced here too, in every index, also when the
 * indexed value did not change (`replace`); Collection.put does that, at
 * about 0.1 µs more per put.
 *
 * `addAll` indexes many records at once (loading a snapshot): the records
 * are grouped by value in one pass, each group becoming that value's set.
 */
import { assertionFailed } from '../assert.js'
import type { Rec } from '../domain/schema.js'

/** What an index keeps for one key. */
export interface RecordSet {
  readonly size: number
  add(rec: Rec): void
  /** Adds many records the set does not hold; it may keep the array. */
  addBulk(recs: Rec[]): void
  /** Removes `rec`, the very object the set holds. */
  remove(rec: Rec): void
  replace(before: Rec, after: Rec): void
  values(): Iterable<Rec>
  /** Gives back the room its array keeps beyond its records (Collection.trimSteps). */
  trim(): void
}

export class PostingIndex<K, S extends RecordSet> {
  private readonly byKey = new Map<K, S>()

  constructor(private readonly newSet: () => S) {}

  /** The record set of `key`; undefined when the key has no records. */
  setOf(key: K): S | undefined {
    return this.byKey.get(key)
  }

  /** The records of `key` (nothing for an unknown key). */
  records(key: K): Iterable<Rec> {
    return this.byKey.get(key)?.values() ?? []
  }

  count(key: K): number {
    return this.byKey.get(key)?.size ?? 0
  }

  /** Adds a record the key does not hold yet; true when the key is new. */
  add(key: K, rec: Rec): boolean {
    const set = this.byKey.get(key)
    if (set !== undefined) {
      set.add(rec)
      return false
    }
    const created = this.newSet()
    created.add(rec)
    this.byKey.set(key, created)
    return true
  }

  /** Removes `rec`, the very object the key holds; true when the key is left with none (it is then gone). */
  remove(key: K, rec: Rec): boolean {
    const set = this.byKey.get(key)
    if (set === undefined) return false
    set.remove(rec)
    if (set.size > 0) return false
    this.byKey.delete(key)
    return true
  }

  /** Puts `after` in the place of `before`, a former version of the same record that the key holds. */
  replace(key: K, before: Rec, after: Rec): void {
    const set = this.byKey.get(key)
    if (set === undefined) assertionFailed(`replace: the index has no records for ${String(key)}`)
    set.replace(before, after)
  }

  /** Trims every key's record set (RecordSet.trim). */
  trim(): void {
    for (const set of this.byKey.values()) set.trim()
  }

  /** Adds every record with a non-null key (records not in the index yet); `onNewKey` hears each key that was not there. */
  addAll(recs: readonly Rec[], keyOf: (rec: Rec) => K | null, onNewKey?: (key: K) => void): void {
    const groups = new Map<K, Rec[]>()
    for (const rec of recs) {
      const key = keyOf(rec)
      if (key === null) continue
      const group = groups.get(key)
      if (group === undefined) groups.set(key, [rec])
      else group.push(rec)
    }
    for (const [key, group] of groups) {
      let set = this.byKey.get(key)
      if (set === undefined) {
        set = this.newSet()
        this.byKey.set(key, set)
        onNewKey?.(key)
      }
      set.addBulk(group)
    }
  }
}
