/*
 * PostingIndex with records kept as added (AddedRecords: an array until
 * their first removal or a replacement found too far back, then a Map by
 * id) against the obvious
 * model, a Map of key → Map of id → record: random adds, removals, moves
 * back and forth, replacements by a new version (recent ones and old
 * ones) and bulk adds, checking after each step that every key gives
 * exactly its records (the very objects), once each, in the order they
 * were added, with the right count, and that add/remove report new and
 * emptied keys. Replacing a record the key does not hold fails an
 * assertion.
 */
import t from 'tap'
import { AddedRecords } from '../../../src/engine/addedRecords.js'
import { PostingIndex } from '../../../src/engine/postingIndex.js'
import type { Rec } from '../../../src/domain/schema.js'
import { fuzzSeed, Random } from '../../helpers/fuzz.js'

const KEYS = ['a', 'b', 'c', 'd']

function rec(id: string, key: string, version = 1): Rec {
  return { id, key, version, createdAt: 0, updatedAt: 0, trashItem: null }
}

t.test('records per key equal a Map of Maps over random operations', async (t) => {
  const seed = fuzzSeed()
  const random = new Random(seed)
  const index = new PostingIndex<string, AddedRecords>(() => new AddedRecords())
  const model = new Map<string, Map<string, Rec>>()
  /** id → its current record, for the records in the index. */
  const placed = new Map<string, Rec>()
  const put = (one: Rec) => {
    const key = one.key as string
    model.set(key, (model.get(key) ?? new Map()).set(one.id, one))
    placed.set(one.id, one)
  }
  let nextId = 0
  for (let step = 0; step < 4_000; step += 1) {
    const roll = random.next()
    if (roll < 0.35 || placed.size === 0) {
      const one = rec(`r${nextId++}`, random.pick(KEYS))
      const isNew = !model.has(one.key as string)
      if (index.add(one.key as string, one) !== isNew) {
        t.fail(`add reports whether the key is new (seed ${seed}, step ${step})`)
        return
      }
      put(one)
    } else if (roll < 0.5) {
      const batch = Array.from({ length: random.int(20) }, () => rec(`r${nextId++}`, random.pick(KEYS)))
      index.addAll(batch, (one) => one.key as string)
      for (const one of batch) put(one)
    } else if (roll < 0.75) {
      // A new version of a record: mostly one of the last added (found in place), sometimes any.
      const ids = [...placed.keys()]
      const id = random.chance(0.7) ? (ids[ids.length - 1 - random.int(Math.min(ids.length, 10))] as string) : random.pick(ids)
      const before = placed.get(id) as Rec
      const after = rec(id, before.key as string, before.version + 1)
      index.replace(before.key as string, before, after)
      put(after)
    } else {
      const id = random.pick([...placed.keys()])
      const key = (placed.get(id) as Rec).key as string
      const recs = model.get(key) as Map<string, Rec>
      recs.delete(id)
      if (recs.size === 0) model.delete(key)
      if (index.remove(key, placed.get(id) as Rec) !== (recs.size === 0)) {
        t.fail(`remove reports whether the key was emptied (seed ${seed}, step ${step})`)
        return
      }
      placed.delete(id)
      if (random.chance(0.5)) {
        // The same record comes back, under the same key or another (a record moved back and forth).
        const back = rec(id, random.pick(KEYS), 1)
        index.add(back.key as string, back)
        put(back)
      }
    }
    for (const key of KEYS) {
      const expected = [...(model.get(key)?.values() ?? [])]
      const got = [...index.records(key)]
      const agrees = got.length === expected.length && got.every((one, at) => one === expected[at]) && index.count(key) === expected.length
      if (!agrees) {
        t.same(
          { records: got.map((one) => `${one.id}@${one.version}`), count: index.count(key) },
          { records: expected.map((one) => `${one.id}@${one.version}`), count: expected.length },
          `${key}: the current records in order, once each, and their count (seed ${seed}, step ${step})`,
        )
        return
      }
    }
  }
  t.pass(`4,000 random steps agree with the model (seed ${seed})`)
})

t.test('replacing a record the key does not hold is refused', async (t) => {
  const index = new PostingIndex<string, AddedRecords>(() => new AddedRecords())
  const held = rec('r1', 'a')
  index.add('a', held)
  t.throws(() => index.replace('a', rec('r2', 'a'), rec('r2', 'a', 2)), /r2 is not held/)
  t.throws(() => index.replace('b', held, rec('r1', 'b', 2)), /no records for b/)
  t.same([...index.records('a')], [held], 'the key still holds its record')
})
