/*
 * The records a collection made for reads are kept until their own row
 * changes (collection.ts `kept`): a write to one record leaves the others'
 * objects as they were read (the rendered JSON of a record is kept by its
 * object, and a write's checks read the same few records again), while
 * the record written, or removed, is never given out stale.
 */
import t from 'tap'
import type { Rec } from '../../../src/domain/schema.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { Collection } from '../../../src/engine/collection.js'

function timeRecord(id: string, version = 1): Rec {
  return { id, user: 'u1', project: 'p1', task: null, start: 1_700_000_000_000, description: `record ${id}`, trashItem: null, version, createdAt: 0, updatedAt: 0 }
}

t.test('a write to one record keeps the other records read before as they were', async (t) => {
  const collection = new Collection(TimeRecord)
  for (const id of ['a', 'b', 'c']) collection.put(timeRecord(id))
  const a = collection.get('a')
  const b = collection.get('b')
  t.equal(collection.get('a'), a, 'read again: the same object')
  collection.put(timeRecord('b', 2))
  t.equal(collection.get('a'), a, 'after a write to b, a is the object read before')
  t.not(collection.get('b'), b, 'b is made anew')
  t.equal(collection.get('b')?.version, 2, 'as written')
  collection.put(timeRecord('d'))
  t.equal(collection.get('a'), a, 'after a new record, a is the object read before')
  t.equal(collection.put(timeRecord('a', 2)), a, 'the record a put replaced is the one read')
  t.equal(collection.get('a')?.version, 2)
  const c = collection.get('c')
  t.equal(collection.remove('c'), c, 'the record a removal took is the one read')
  t.equal(collection.get('c'), undefined, 'a removed record is not given out')
  t.equal(collection.record(collection.rowOf('d')), collection.get('d'), 'a page and a read by id share the kept record')
})
