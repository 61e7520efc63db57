/*
 * RecordTable (a collection's primary index: records in slots in the order
 * added, an index id → slot of one open-addressing IdShard while small and
 * SHARD_COUNT of them from SHARDED_FROM records on) against a Map, with
 * eight hash seeds (removals shift entries back along different probe
 * paths with each), over random adds,
 * replacements, refused inserts of held ids, and removals, made sharded early (from 64 records), then a
 * stretch of mostly removals (chunks more than half holes are compacted)
 * and adds again: after each step every id gives the model's record, the
 * size is the model's, and the records are the model's, once each, in the
 * model's order (a replaced record keeps its place).
 */
import t from 'tap'
import type { Rec } from '../../../src/domain/schema.js'
import { RecordTable } from '../../../src/engine/recordTable.js'
import { fuzzSeed, Random } from '../../helpers/fuzz.js'

function rec(id: string, version = 1): Rec {
  return { id, version, createdAt: 0, updatedAt: 0, trashItem: null }
}

const HASH_SEEDS = 8

for (let round = 0; round < HASH_SEEDS; round += 1) t.test(`a table equals a Map over random changes, before and after it is sharded (hash seed ${round})`, async (t) => {
  const seed = fuzzSeed() + round
  const random = new Random(seed)
  const table = new RecordTable(64, Math.imul(seed, 0x9e3779b1))
  const model = new Map<string, Rec>()
  let nextId = 0
  let sharded = false
  for (let step = 0; step < 4_000; step += 1) {
    // Steps 2,000–2,999 mostly remove, so that chunks fill with holes and are compacted.
    const removing = step >= 2_000 && step < 3_000
    const roll = removing ? 0.5 + random.next() / 2 : random.next()
    const ids = [...model.keys()]
    if (roll < 0.55 || ids.length === 0) {
      const one = rec(`${(nextId++).toString(36)}-${random.int(1_000_000)}`)
      if (random.chance(0.5)) {
        if (table.insert(one) !== true) return t.fail(`an inserted new id is reported new (seed ${seed}, step ${step})`)
      } else if (table.set(one) !== undefined) return t.fail(`a new id is reported new (seed ${seed}, step ${step})`)
      model.set(one.id, one)
    } else if (roll < 0.6) {
      const held = model.get(random.pick(ids)) as Rec
      if (table.insert(rec(held.id, held.version + 1)) !== false) return t.fail(`inserting a held id is refused (seed ${seed}, step ${step})`)
    } else if (roll < 0.8) {
      const before = model.get(random.pick(ids)) as Rec
      const after = rec(before.id, before.version + 1)
      if (table.set(after) !== before) return t.fail(`a replacement gives the record it replaced (seed ${seed}, step ${step})`)
      model.set(after.id, after)
    } else {
      const id = random.chance(0.9) ? random.pick(ids) : 'no-such-id'
      if (table.delete(id) !== model.get(id)) return t.fail(`delete gives the removed record (seed ${seed}, step ${step})`)
      model.delete(id)
    }
    sharded ||= model.size >= 64
    const values = [...table.values()]
    const sameRecords = values.length === model.size && values.every((one) => model.get(one.id) === one) && new Set(values.map((one) => one.id)).size === values.length
    const modelOrder = [...model.values()]
    const sameOrder = values.every((one, at) => one === modelOrder[at])
    const lookups = [...model.values()].every((one) => table.get(one.id) === one) && table.get('no-such-id') === undefined
    if (!sameRecords || !sameOrder || !lookups || table.size !== model.size) {
      t.fail(`the model's records, in its order, each found by its id (seed ${seed}, step ${step}, sharded ${sharded})`, {
        found: { size: table.size, ids: values.map((one) => one.id), lookups },
        wanted: { size: model.size, ids: [...model.keys()] },
      })
      return
    }
  }
  t.ok(sharded, 'the table was sharded on the way')
  t.pass(`4,000 random steps agree with the model (seed ${seed})`)
})
