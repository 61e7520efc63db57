/*
 * RecordTable (a collection's primary index: one Map while small, SHARD_COUNT
 * Maps from SHARDED_FROM records on) against a Map over random adds,
 * replacements and removals, made sharded early (from 64 records): after
 * each step every id gives the model's record, the size is the model's,
 * and the records are the model's, once each. While one Map, they come in
 * the model's order; sharded, in an order that a table filled in that
 * order gives again (as a snapshot loaded after a restart does).
 */
import t from 'tap'
import type { Rec } from '../src/domain/schema.js'
import { RecordTable } from '../src/engine/recordTable.js'
import { fuzzSeed, Random } from './helpers/fuzz.js'

function rec(id: string, version = 1): Rec {
  return { id, version, createdAt: 0, updatedAt: 0, trashItem: null }
}

t.test('a table equals a Map over random changes, before and after it is sharded', async (t) => {
  const seed = fuzzSeed()
  const random = new Random(seed)
  const table = new RecordTable(64)
  const model = new Map<string, Rec>()
  let nextId = 0
  let sharded = false
  for (let step = 0; step < 3_000; step += 1) {
    const roll = random.next()
    const ids = [...model.keys()]
    if (roll < 0.55 || ids.length === 0) {
      const one = rec(`${(nextId++).toString(36)}-${random.int(1_000_000)}`)
      if (table.set(one) !== true) return t.fail(`a new id is reported new (seed ${seed}, step ${step})`)
      model.set(one.id, one)
    } else if (roll < 0.8) {
      const before = model.get(random.pick(ids)) as Rec
      const after = rec(before.id, before.version + 1)
      if (table.set(after) !== false) return t.fail(`a replacement is not reported new (seed ${seed}, step ${step})`)
      model.set(after.id, after)
    } else {
      const id = random.chance(0.9) ? random.pick(ids) : 'no-such-id'
      if (table.delete(id) !== model.get(id)) return t.fail(`delete gives the removed record (seed ${seed}, step ${step})`)
      model.delete(id)
    }
    sharded ||= model.size >= 64
    const values = [...table.values()]
    const sameRecords = values.length === model.size && values.every((one) => model.get(one.id) === one) && new Set(values.map((one) => one.id)).size === values.length
    const sameOrder = sharded || values.every((one, at) => one === [...model.values()][at])
    const lookups = [...model.values()].every((one) => table.get(one.id) === one) && table.get('no-such-id') === undefined
    if (!sameRecords || !sameOrder || !lookups || table.size !== model.size) {
      t.same({ size: table.size, ids: values.map((one) => one.id) }, { size: model.size, ids: [...model.keys()] }, `the model's records (seed ${seed}, step ${step}, sharded ${sharded})`)
      return
    }
  }
  t.ok(sharded, 'the table was sharded on the way')
  const reloaded = new RecordTable(64)
  for (const one of table.values()) reloaded.set(one)
  t.same([...reloaded.values()].map((one) => one.id), [...table.values()].map((one) => one.id), 'a table filled in the order read gives the same order (a restart)')
  t.pass(`3,000 random steps agree with the model (seed ${seed})`)
})
