/*
 * A collection's secondary and range indexes hold rows, so every put must
 * leave each record's row under exactly its current values, whether the
 * put changed the indexed value, moved the date to another day or within
 * its day, set it to null, or changed nothing indexed at all. Random
 * creates, updates and removals of time records, checked after each step
 * against a scan of the collection: every lookup and every range walk gives
 * the current version of the records that hold the value (equal to what
 * the primary index gives), once each.
 */
import t, { type Test } from 'tap'
import type { Rec } from '../../../src/domain/schema.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { Collection } from '../../../src/engine/collection.js'
import { fuzzSeed, Random } from '../../helpers/fuzz.js'

const DAY_MS = 86_400_000
const BASE_MS = 1_700_000_000_000
const USERS = ['u1', 'u2', 'u3']
const PROJECTS = ['p1', 'p2', 'p3']

function start(random: Random): number | null {
  return random.chance(0.08) ? null : BASE_MS + random.int(20) * DAY_MS + random.int(DAY_MS)
}

function newRecord(random: Random, id: string): Rec {
  return { id, user: random.pick(USERS), project: random.chance(0.1) ? null : random.pick(PROJECTS), task: null, start: start(random), trashItem: null, version: 1, createdAt: 0, updatedAt: 0 }
}

/** A new version of `before`: nothing indexed changed, or the project, or the start (same day, another day, null). */
function newVersion(random: Random, before: Rec): Rec {
  const after: Rec = { ...before, version: before.version + 1 }
  const roll = random.next()
  if (roll < 0.3) return after
  if (roll < 0.5) after.project = random.chance(0.2) ? null : random.pick(PROJECTS)
  else if (roll < 0.7 && typeof before.start === 'number') after.start = before.start - (before.start % DAY_MS) + random.int(DAY_MS)
  else after.start = start(random)
  return after
}

const byId = (recs: Iterable<Rec>) => [...recs].map((rec) => `${rec.id}@${rec.version}`).sort()

/** Whether `rec` is the collection's current version of its record (every put raises the version). */
const current = (collection: Collection, rec: Rec) => collection.get(rec.id)?.version === rec.version

function check(t: Test, collection: Collection, context: string): boolean {
  const all = [...collection.values()]
  for (const [field, values] of [
    ['user', USERS],
    ['project', PROJECTS],
  ] as const) {
    for (const value of values) {
      const got = [...collection.lookup(field, value)]
      const expected = all.filter((rec) => rec[field] === value)
      if (got.length !== expected.length || got.some((rec) => !current(collection, rec)) || byId(got).join() !== byId(expected).join()) {
        t.same(byId(got), byId(expected), `${field} = ${value}: the current versions, once each (${context})`)
        return false
      }
    }
  }
  const walked = [...(collection.rangeIndexes.get('start')?.walk({ lowInclusive: true, highInclusive: true }, false) ?? [])]
  if (walked.length !== all.length || walked.some((rec) => !current(collection, rec))) {
    t.same(byId(walked), byId(all), `the start index walks the current versions, once each (${context})`)
    return false
  }
  // A range is read in whole days: the days from low's to high's.
  const firstDay = Math.floor(BASE_MS / DAY_MS) + 5
  const inRange = [...(collection.rangeIndexes.get('start')?.walk({ low: firstDay * DAY_MS + 1, high: (firstDay + 3) * DAY_MS, lowInclusive: true, highInclusive: false }, true) ?? [])]
  const expected = all.filter((rec) => typeof rec.start === 'number' && Math.floor(rec.start / DAY_MS) >= firstDay && Math.floor(rec.start / DAY_MS) <= firstDay + 3)
  if (inRange.length !== expected.length || inRange.some((rec) => !current(collection, rec)) || byId(inRange).join() !== byId(expected).join()) {
    t.same(byId(inRange), byId(expected), `four days of the start index (${context})`)
    return false
  }
  return true
}

t.test('indexes hold the current version of every record through random changes', async (t) => {
  const seed = fuzzSeed()
  const random = new Random(seed)
  const collection = new Collection(TimeRecord)
  let nextId = 0
  for (let step = 0; step < 3_000; step += 1) {
    const roll = random.next()
    if (roll < 0.3 || collection.size === 0) collection.put(newRecord(random, `r${nextId++}`))
    else if (roll < 0.9) collection.put(newVersion(random, collection.get(random.pick([...collection.values()]).id) as Rec))
    else collection.remove(random.pick([...collection.values()]).id)
    if (!check(t, collection, `seed ${seed}, step ${step}`)) return
  }
  t.pass(`3,000 random steps (seed ${seed}), ${collection.size} records left`)
})

t.test('a loaded collection replaces loaded records in its indexes too', async (t) => {
  const random = new Random(7)
  const collection = new Collection(TimeRecord)
  for (let index = 0; index < 500; index += 1) collection.load(newRecord(random, `r${index}`))
  collection.finishLoad()
  for (let step = 0; step < 500; step += 1) collection.put(newVersion(random, collection.get(`r${random.int(500)}`) as Rec))
  t.ok(check(t, collection, 'after 500 updates of loaded records'))
})
