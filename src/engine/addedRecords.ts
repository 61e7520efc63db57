/*
 * The records of one index key as they were added: the record set of an
 * index whose lists need no order of their own (postingIndex.ts).
 *
 * The records are kept in an array for as long as records are only added,
 * and become a RecordTable (id → record, never rehashed whole, in the
 * order they were added while small: recordTable.ts) at their first
 * removal. Loading a snapshot and replaying a log of new records only
 * ever add, so for them a record costs one array slot (8 bytes, one
 * store) instead of a hash entry and a hash insert into a table that keeps
 * growing (on a million time records: 87 bytes of heap less per record,
 * and recovery about a fifth faster). A replacement looks for the old
 * object among the last REPLACE_LOOKBACK of the array, where the records
 * being edited usually are (time is mostly booked and corrected recently),
 * and overwrites it in place; an older one turns the array into a table
 * first. An array never holds a record twice: a record leaves a key only
 * by a removal, which makes the records a table, so coming back is a set.
 */
import { assertionFailed } from '../assert.js'
import type { Rec } from '../domain/schema.js'
import type { RecordSet } from './postingIndex.js'
import { RecordTable } from './recordTable.js'

/** How far back from its end an array is searched for a record being replaced before it becomes a table. */
const REPLACE_LOOKBACK = 64

export class AddedRecords implements RecordSet {
  private recs: Rec[] | RecordTable = []

  get size(): number {
    return Array.isArray(this.recs) ? this.recs.length : this.recs.size
  }

  add(rec: Rec): void {
    if (Array.isArray(this.recs)) this.recs.push(rec)
    else this.recs.set(rec)
  }

  /** Adds many records at once; an empty set takes `recs` as its own array. */
  addBulk(recs: Rec[]): void {
    if (Array.isArray(this.recs) && this.recs.length === 0) this.recs = recs
    else for (const rec of recs) this.add(rec)
  }

  remove(rec: Rec): void {
    this.asTable().delete(rec.id)
  }

  /** Puts `after` in the place of `before`, a former version of the same record that the key holds. */
  replace(before: Rec, after: Rec): void {
    const recs = this.recs
    if (Array.isArray(recs)) {
      for (let at = recs.length - 1, last = Math.max(0, recs.length - REPLACE_LOOKBACK); at >= last; at -= 1) {
        if (recs[at] === before) {
          recs[at] = after
          return
        }
      }
    }
    const byId = this.asTable()
    if (byId.get(after.id) !== before) assertionFailed(`replace: ${after.id} is not held as its former version`)
    byId.set(after)
  }

  /** The array copied to its length: V8 gives a copy no more room than it needs. */
  trim(): void {
    if (Array.isArray(this.recs)) this.recs = this.recs.slice()
  }

  values(): Iterable<Rec> {
    return Array.isArray(this.recs) ? this.recs : this.recs.values()
  }

  /** The records as a table by id from now on. */
  private asTable(): RecordTable {
    if (!Array.isArray(this.recs)) return this.recs
    const byId = new RecordTable()
    for (const rec of this.recs) byId.set(rec)
    this.recs = byId
    return byId
  }
}
