/*
 * Loading a snapshot indexes its records in one go (Collection.load, then
 * finishLoad; PostingIndex.addRows, DateBuckets.addAllSteps). The indexes built that way must answer exactly
 * as indexes built by one put per record: every lookup and every range
 * walk, over random time records (null references and null starts
 * included). Using the collection before finishLoad is refused; finishLoad
 * run as steps pauses after each pass over the rows of an index, and within
 * a pass after each step of records. Trimming the indexes after a load (trimSteps) pauses
 * after each index and changes no answer, nor any write after it.
 */
import t from 'tap'
import type { Rec } from '../../../src/domain/schema.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { Collection } from '../../../src/engine/collection.js'
import { fuzzSeed, Random } from '../../helpers/fuzz.js'

const DAY_MS = 86_400_000

function randomRecords(random: Random, count: number): Rec[] {
  const users = ['u1', 'u2', 'u3']
  const projects = ['p1', 'p2', 'p3', 'p4']
  return Array.from({ length: count }, (_, index) => ({
    id: `r${index}`,
    user: random.pick(users),
    project: random.chance(0.1) ? null : random.pick(projects),
    task: null,
    start: random.chance(0.05) ? null : 1_700_000_000_000 + random.int(60) * DAY_MS + random.int(DAY_MS),
    trashItem: null,
    version: 1,
    createdAt: 0,
    updatedAt: 0,
  }))
}

const ids = (recs: Iterable<Rec>): string[] => [...recs].map((rec) => rec.id).sort()

t.test('bulk-built indexes answer as indexes built one put at a time', async (t) => {
  const seed = fuzzSeed()
  const records = randomRecords(new Random(seed), 2_000)
  const loaded = new Collection(TimeRecord)
  const put = new Collection(TimeRecord)
  for (const rec of records.slice(0, 1_500)) loaded.load(rec)
  loaded.finishLoad()
  for (const rec of records.slice(1_500)) loaded.load(rec)
  loaded.finishLoad()
  for (const rec of records) put.put(rec)
  t.equal(loaded.size, put.size)
  for (const field of ['user', 'project']) {
    for (const value of ['u1', 'u2', 'u3', 'p1', 'p2', 'p3', 'p4', 'nobody', null]) {
      t.same(ids(loaded.lookup(field, value)), ids(put.lookup(field, value)), `${field} = ${value} (seed ${seed})`)
      t.equal(loaded.countOf(field, value), put.countOf(field, value))
    }
  }
  const walkIds = (collection: Collection, low?: number, high?: number) =>
    [...(collection.rangeIndexes.get('start')?.walk({ low, high, lowInclusive: true, highInclusive: false }, false) ?? [])].map((rec) => rec.id)
  t.same(walkIds(loaded), walkIds(put), 'the whole walk, nulls first, in day order')
  const low = 1_700_000_000_000 + 10 * DAY_MS
  t.same(walkIds(loaded, low, low + 7 * DAY_MS).sort(), walkIds(put, low, low + 7 * DAY_MS).sort(), 'a week')
})

t.test('a collection is not used while loaded records wait to be indexed', async (t) => {
  const collection = new Collection(TimeRecord)
  const [first, second] = randomRecords(new Random(1), 2) as [Rec, Rec]
  collection.load(first)
  t.throws(() => collection.put(second), /before the loaded records were indexed/)
  t.throws(() => [...collection.lookup('user', 'u1')], /before the loaded records were indexed/)
  t.throws(() => collection.load(first), /loaded twice/)
  collection.finishLoad()
  collection.put(second)
  t.equal(collection.size, 2)
})

/**
 * Passes of finishLoadSteps over the loaded rows: two per secondary index (its keys' rows counted, then placed), one
 * listing the live rows for the range indexes, and two per range index (the rows' days read, then the rows placed).
 */
const rangeIndexes = TimeRecord.fields.filter((fieldDecl) => fieldDecl.rangeIndexed === true).length
const indexPasses = TimeRecord.fields.filter((fieldDecl) => fieldDecl.indexed === true).length * 2 + (rangeIndexes > 0 ? 1 : 0) + rangeIndexes * 2

t.test('finishLoad as steps pauses after each pass over the rows of an index and leaves the collection indexed', async (t) => {
  const collection = new Collection(TimeRecord)
  const records = randomRecords(new Random(2), 100)
  for (const rec of records) collection.load(rec)
  const steps = collection.finishLoadSteps()
  let pauses = 0
  for (let next = steps.next(); next.done !== true; next = steps.next()) {
    pauses += 1
    if (pauses === 1) t.throws(() => collection.put(records[0] as Rec), /before the loaded records were indexed/, 'not before the last index')
  }
  t.equal(pauses, indexPasses, 'one pause per pass')
  t.equal([...collection.lookup('user', 'u1')].length, records.filter((rec) => rec.user === 'u1').length)
})

t.test('finishLoad as steps adds at most a step of records to an index at a time, and indexes as one put each does', async (t) => {
  const seed = fuzzSeed()
  const records = randomRecords(new Random(seed), 1_000)
  const stepped = new Collection(TimeRecord, 64)
  const put = new Collection(TimeRecord)
  for (const rec of records) {
    stepped.load(rec)
    put.put(rec)
  }
  let pauses = 0
  const steps = stepped.finishLoadSteps()
  for (let next = steps.next(); next.done !== true; next = steps.next()) pauses += 1
  t.ok(pauses >= indexPasses * Math.ceil(1_000 / 64), `${pauses} pauses: one after each 64 records of each pass at least`)
  for (const field of ['user', 'project']) {
    for (const value of ['u1', 'u2', 'u3', 'p1', 'p2', 'p3', 'p4', null]) {
      t.same(ids(stepped.lookup(field, value)), ids(put.lookup(field, value)), `${field} = ${value} (seed ${seed})`)
    }
  }
  const walkIds = (collection: Collection) => [...(collection.rangeIndexes.get('start')?.walk({ lowInclusive: true, highInclusive: true }, false) ?? [])].map((rec) => rec.id)
  t.same(walkIds(stepped).sort(), walkIds(put).sort(), `the range index holds the same records (seed ${seed})`)
  const inOrder = (collection: Collection) => [...(collection.orderedLookup('project', 'p1', 'start', true) ?? [])].map((rec) => rec.id)
  t.same(inOrder(stepped), inOrder(put), 'a key read in order gives the same order')
})

t.test('trimSteps pauses after each index and leaves every index answering as before, also for writes after it', async (t) => {
  const seed = fuzzSeed()
  const random = new Random(seed)
  const records = randomRecords(random, 1_000)
  const trimmed = new Collection(TimeRecord, 64)
  const put = new Collection(TimeRecord)
  for (const rec of records.slice(0, 900)) {
    trimmed.load(rec)
    put.put(rec)
  }
  trimmed.finishLoad()
  let pauses = 0
  const steps = trimmed.trimSteps()
  for (let next = steps.next(); next.done !== true; next = steps.next()) pauses += 1
  const indexed = TimeRecord.fields.filter((fieldDecl) => fieldDecl.indexed === true || fieldDecl.rangeIndexed === true).length
  t.equal(pauses, indexed, 'a pause after each index')
  for (const rec of records.slice(900)) {
    trimmed.put(rec)
    put.put(rec)
  }
  for (const rec of records.slice(0, 50)) {
    const changed = { ...rec, project: random.pick(['p1', 'p2', null]), version: 2 }
    trimmed.put(changed)
    put.put(changed)
  }
  for (const rec of records.slice(50, 80)) {
    trimmed.remove(rec.id)
    put.remove(rec.id)
  }
  for (const field of ['user', 'project']) {
    for (const value of ['u1', 'u2', 'u3', 'p1', 'p2', 'p3', 'p4', null]) {
      t.same(ids(trimmed.lookup(field, value)), ids(put.lookup(field, value)), `${field} = ${value} (seed ${seed})`)
    }
  }
  const walkIds = (collection: Collection) => [...(collection.rangeIndexes.get('start')?.walk({ lowInclusive: true, highInclusive: true }, false) ?? [])].map((rec) => rec.id)
  t.same(walkIds(trimmed).sort(), walkIds(put).sort(), `the range index holds the same records (seed ${seed})`)
})

t.test('dates spread over more days than the bulk sort counts are indexed one at a time, as puts index them', async (t) => {
  const random = new Random(3)
  const records = randomRecords(random, 300).map((rec, index) => (index % 50 === 0 ? { ...rec, start: index === 0 ? 0 : 4e14 + index } : rec))
  const loaded = new Collection(TimeRecord, 64)
  const put = new Collection(TimeRecord)
  for (const rec of records) {
    loaded.load(rec)
    put.put(rec)
  }
  loaded.finishLoad()
  const walkIds = (collection: Collection) => [...(collection.rangeIndexes.get('start')?.walk({ lowInclusive: true, highInclusive: true }, false) ?? [])].map((rec) => rec.id)
  t.same(walkIds(loaded), walkIds(put), 'the whole walk, nulls first, in day order')
  t.same(walkIds(loaded).length, records.length)
})
