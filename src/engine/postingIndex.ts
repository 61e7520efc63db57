/*
 * A value → records index (the secondary indexes of a collection, the day
 * buckets of a range index).
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
 * The records of one value are kept in an array for as long as records
 * are only added, and become a Map (id → record, in the order they were
 * added) at their first removal. Loading a snapshot and replaying a log
 * of new records only ever add, so for them a record costs one array slot
 * (8 bytes, one store) instead of a hash entry and a hash insert into a
 * table that keeps growing (on a million time records: 87 bytes of heap
 * less per record, and recovery about a fifth faster). A replacement
 * looks for the old object among the last REPLACE_LOOKBACK of the array,
 * where the records being edited usually are (time is mostly booked and
 * corrected recently), and overwrites it in place; an older one turns the
 * array into a Map first. An array never holds a record twice: a record
 * leaves a value only by a removal, which makes that value's records a
 * Map, so coming back is a Map set.
 *
 * `addAll` indexes many records at once (loading a snapshot): the records
 * are grouped by value in one pass, each group becoming that value's array.
 */
import { assertionFailed } from '../domain/errors.js'
import type { Rec } from '../domain/schema.js'

type Recs = Rec[] | Map<string, Rec>

/** How far back from its end an array is searched for a record being replaced before it becomes a Map. */
const REPLACE_LOOKBACK = 64

export class PostingIndex<K> {
  private readonly byKey = new Map<K, Recs>()

  /** The records of `key` (nothing for an unknown key), in the order they were added. */
  records(key: K): Iterable<Rec> {
    const recs = this.byKey.get(key)
    return recs === undefined ? [] : Array.isArray(recs) ? recs : recs.values()
  }

  count(key: K): number {
    const recs = this.byKey.get(key)
    return recs === undefined ? 0 : Array.isArray(recs) ? recs.length : recs.size
  }

  /** Adds a record the key does not hold yet; true when the key is new. */
  add(key: K, rec: Rec): boolean {
    const recs = this.byKey.get(key)
    if (recs === undefined) {
      this.byKey.set(key, [rec])
      return true
    }
    if (Array.isArray(recs)) recs.push(rec)
    else recs.set(rec.id, rec)
    return false
  }

  /** Removes the record with this id; true when the key is left with none (it is then gone). */
  remove(key: K, id: string): boolean {
    const recs = this.byKey.get(key)
    if (recs === undefined) return false
    const byId = Array.isArray(recs) ? this.asMap(key, recs) : recs
    byId.delete(id)
    if (byId.size === 0) {
      this.byKey.delete(key)
      return true
    }
    return false
  }

  /** Puts `after` in the place of `before`, a former version of the same record that the key holds. */
  replace(key: K, before: Rec, after: Rec): void {
    const recs = this.byKey.get(key)
    if (recs === undefined) assertionFailed(`replace: the index has no records for ${String(key)}`)
    if (Array.isArray(recs)) {
      for (let at = recs.length - 1, last = Math.max(0, recs.length - REPLACE_LOOKBACK); at >= last; at -= 1) {
        if (recs[at] === before) {
          recs[at] = after
          return
        }
      }
    }
    const byId = Array.isArray(recs) ? this.asMap(key, recs) : recs
    if (byId.get(after.id) !== before) assertionFailed(`replace: ${after.id} is not indexed under ${String(key)} as its former version`)
    byId.set(after.id, after)
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
      const existing = this.byKey.get(key)
      if (existing === undefined) {
        this.byKey.set(key, group)
        onNewKey?.(key)
      } else if (Array.isArray(existing)) {
        for (const rec of group) existing.push(rec)
      } else {
        for (const rec of group) existing.set(rec.id, rec)
      }
    }
  }

  /** The key's records as a Map from now on. */
  private asMap(key: K, recs: readonly Rec[]): Map<string, Rec> {
    const byId = new Map<string, Rec>()
    for (const rec of recs) byId.set(rec.id, rec)
    this.byKey.set(key, byId)
    return byId
  }
}
