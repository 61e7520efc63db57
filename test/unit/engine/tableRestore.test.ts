/*
 * A table restored from a snapshot's columns (ColumnTable.restoreSteps) is
 * indexed in bulk: its id index is built from every live row's hash, in one
 * shard or grouped into many (RowIndex.addAllSteps), its pool codes counted
 * a chunk at a time. The restored table must answer every id as the
 * original (removed rows and ids never held answer -1), go on taking
 * inserts and removals, refuse an image that holds an id twice, and pause
 * in every pass over its rows at least once a chunk, so that a server
 * restoring a million records does it a few milliseconds at a time.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import type { Rec } from '../../../src/domain/schema.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { ColumnTable } from '../../../src/engine/columnTable.js'
import { CHUNK_ROWS } from '../../../src/engine/rowChunks.js'
import { runNow } from '../../../src/engine/steps.js'
import { StringPool } from '../../../src/engine/stringPool.js'
import type { IdChunks, TableImage } from '../../../src/engine/tableImage.js'
import { fuzzSeed, Random } from '../../helpers/fuzz.js'

const SEED = 0x5eed

function record(id: string, random: Random): Rec {
  return {
    id,
    user: random.pick(['u1', 'u2', 'u3']),
    project: random.chance(0.2) ? null : random.pick(['p1', 'p2']),
    start: 1_700_000_000_000 + random.int(1e9),
    trashItem: null,
    version: 1,
    createdAt: 0,
    updatedAt: 0,
  }
}

/** A table of `count` rows (UUIDs, and every 97th id not one), every 5th removed; the ids held and removed. */
function original(random: Random, count: number): { table: ColumnTable; held: string[]; removed: string[] } {
  const table = new ColumnTable(TimeRecord, new StringPool(), SEED)
  const held: string[] = []
  const removed: string[] = []
  for (let index = 0; index < count; index += 1) {
    const id = index % 97 === 0 ? `r${index}` : randomUUID()
    table.insert(record(id, random))
    held.push(id)
  }
  for (let index = 0; index < count; index += 5) {
    const id = held[index] as string
    table.remove(table.rowOf(id))
    removed.push(id)
  }
  return { table, held: held.filter((_, index) => index % 5 !== 0), removed }
}

/** A deep copy of a value of an image: a load reads its arrays from a file, and a restored table writes into them. */
function copied<T>(value: T): T {
  if (ArrayBuffer.isView(value)) return (value as unknown as Int32Array).slice() as unknown as T
  if (value instanceof Map) return new Map([...value].map(([key, item]) => [key, copied(item)])) as T
  if (Array.isArray(value)) return value.map((item) => copied(item)) as T
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, copied(item)])) as T
  return value
}

/** A new table (and pool) restored from `image`, its index split into shards from `shardedFrom` ids; its pauses counted. */
function restored(image: TableImage, pool: StringPool, shardedFrom: number): { table: ColumnTable; pauses: number } {
  const restoredPool = new StringPool()
  runNow(restoredPool.restoreSteps(pool.image()))
  const table = new ColumnTable(TimeRecord, restoredPool, SEED + 1, shardedFrom)
  let pauses = 0
  const steps = table.restoreSteps(copied(image), CHUNK_ROWS)
  for (let next = steps.next(); next.done !== true; next = steps.next()) pauses += 1
  runNow(restoredPool.finishRestoreSteps())
  return { table, pauses }
}

t.test('a restored table finds every id at its row and no other, with its id index in one shard or in many, and goes on taking writes', async (t) => {
  const seed = fuzzSeed()
  const random = new Random(seed)
  const { table, held, removed } = original(random, 3 * CHUNK_ROWS + 100)
  const frozen = table.frozen()
  const image = frozen.image()
  for (const shardedFrom of [1 << 20, 64]) {
    const { table: copy } = restored(image, table.pool, shardedFrom)
    t.equal(copy.size, table.size, `as many live rows (sharded from ${shardedFrom})`)
    let misplaced = 0
    for (const id of held) if (copy.rowOf(id) !== table.rowOf(id)) misplaced += 1
    t.equal(misplaced, 0, `every id held at its row (seed ${seed}, sharded from ${shardedFrom})`)
    t.ok(
      removed.every((id) => copy.rowOf(id) === -1),
      'a removed id is not found',
    )
    t.equal(copy.rowOf(randomUUID()), -1, 'an id never held is not found')
    t.equal(copy.rowOf('r1'), -1, 'nor is a text id never held')
    const rows = [...copy.rows()]
    t.same(rows, [...table.rows()], 'the same live rows')
    t.same(
      rows.filter((row) => row % 37 === 0).map((row) => copy.record(row)),
      rows.filter((row) => row % 37 === 0).map((row) => table.record(row)),
      'the same records',
    )
    const added = Array.from({ length: 2 * CHUNK_ROWS }, () => randomUUID())
    for (const id of added) copy.insert(record(id, random))
    for (const id of held.slice(0, 1000)) copy.remove(copy.rowOf(id))
    t.ok(
      added.every((id) => copy.rowOf(id) >= 0),
      'ids inserted after the restore are found',
    )
    t.ok(
      held.slice(0, 1000).every((id) => copy.rowOf(id) === -1) && held.slice(1000).every((id) => copy.rowOf(id) === table.rowOf(id)),
      'ids removed after the restore are gone, the others still at their rows',
    )
    t.throws(() => copy.insert(record(held[2000] as string, random)), /inserted twice/, 'an id held is refused again')
  }
  frozen.release()
})

t.test('an image that holds an id twice is refused', async (t) => {
  const random = new Random(1)
  const { table } = original(random, CHUNK_ROWS + 10)
  const image = table.frozen().image()
  const idAt = image.names.indexOf('id')
  const ids = image.columns[idAt] as IdChunks
  // Row 1's id written over row 2's (both UUIDs, both live), in a copy of the chunk.
  const words = (ids.words[0] as Int32Array).slice()
  words.copyWithin(2 * 4, 1 * 4, 2 * 4)
  const columns = image.columns.map((column, at) => (at === idAt ? { ...ids, words: [words, ...ids.words.slice(1)] } : column))
  for (const shardedFrom of [1 << 20, 64]) {
    t.throws(() => restored({ ...image, columns }, table.pool, shardedFrom), /the id of row \d+ is held by another row/, `sharded from ${shardedFrom}`)
  }
})

t.test('a restore pauses at least once a chunk of rows in each of its passes over the rows', async (t) => {
  const chunks = 5
  const { table } = original(new Random(2), chunks * CHUNK_ROWS)
  const { pauses } = restored(table.frozen().image(), table.pool, 64)
  // The live flags counted, the live rows listed and their codes counted, their ids hashed: a pause a chunk each.
  t.ok(pauses >= 3 * chunks, `${pauses} pauses for ${chunks} chunks`)
})
