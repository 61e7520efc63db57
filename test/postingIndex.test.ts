/*
 * PostingIndex (ids as an array until their first removal, then a Set)
 * against the obvious model, a Map of key → Set: random adds, removals,
 * moves back and forth and bulk adds, checking after each step that every
 * key gives exactly its ids, once each, in the order they were added, with
 * the right count, and that add/remove report new and emptied keys.
 */
import t from 'tap'
import { PostingIndex } from '../src/engine/postingIndex.js'
import type { Rec } from '../src/domain/schema.js'
import { fuzzSeed, Random } from './helpers/fuzz.js'

const KEYS = ['a', 'b', 'c', 'd']

function rec(id: string, key: string): Rec {
  return { id, key, version: 1, createdAt: 0, updatedAt: 0, trashItem: null }
}

t.test('ids per key equal a Map of Sets over random operations', async (t) => {
  const seed = fuzzSeed()
  const random = new Random(seed)
  const index = new PostingIndex<string>()
  const model = new Map<string, Set<string>>()
  /** id → its key, for the ids in the index. */
  const placed = new Map<string, string>()
  let nextId = 0
  for (let step = 0; step < 3_000; step += 1) {
    const roll = random.next()
    if (roll < 0.4 || placed.size === 0) {
      const id = `r${nextId++}`
      const key = random.pick(KEYS)
      const isNew = !model.has(key)
      if (index.add(key, id) !== isNew) {
        t.fail(`add reports whether the key is new (seed ${seed}, step ${step})`)
        return
      }
      model.set(key, (model.get(key) ?? new Set()).add(id))
      placed.set(id, key)
    } else if (roll < 0.6) {
      const batch = Array.from({ length: random.int(20) }, () => rec(`r${nextId++}`, random.pick(KEYS)))
      index.addAll(batch, (one) => one.key as string)
      for (const one of batch) {
        model.set(one.key as string, (model.get(one.key as string) ?? new Set()).add(one.id))
        placed.set(one.id, one.key as string)
      }
    } else {
      const id = random.pick([...placed.keys()])
      const key = placed.get(id) as string
      const ids = model.get(key) as Set<string>
      ids.delete(id)
      if (ids.size === 0) model.delete(key)
      if (index.remove(key, id) !== (ids.size === 0)) {
        t.fail(`remove reports whether the key was emptied (seed ${seed}, step ${step})`)
        return
      }
      placed.delete(id)
      if (random.chance(0.5)) {
        // The same id comes back, under the same key or another (a record moved back and forth).
        const back = random.pick(KEYS)
        index.add(back, id)
        model.set(back, (model.get(back) ?? new Set()).add(id))
        placed.set(id, back)
      }
    }
    for (const key of KEYS) {
      const expected = [...(model.get(key) ?? [])]
      const got = [...index.ids(key)]
      const agrees = got.length === expected.length && got.every((id, at) => id === expected[at]) && index.count(key) === expected.length
      if (!agrees) {
        t.same({ ids: got, count: index.count(key) }, { ids: expected, count: expected.length }, `${key}: ids in order, once each, and their count (seed ${seed}, step ${step})`)
        return
      }
    }
  }
  t.pass(`3,000 random steps agree with the model (seed ${seed})`)
})
