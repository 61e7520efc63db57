/*
 * A collection's primary index: id → record, in the order the records
 * were added, that never rehashes a large table at once.
 *
 * The records sit in `slots`, chunks of SLOT_CHUNK positions filled in the
 * order records are added (a replaced record keeps its slot). The index
 * from id to slot is an open-addressing hash table in typed arrays
 * (IdShard): per position the id's 32-bit hash and its slot + 1 (0: free),
 * linear probing, at most half full, a removal shifting the entries after
 * it back (no tombstones). A probe compares hashes, and reads a record's
 * id only when the hashes are equal.
 *
 * Why not a V8 Map:
 * * A Map doubles its table when full and moves every entry in the same
 *   call: on the benchmark VM the 1,048,577th `set` of a Map of UUIDs took
 *   502 ms, and stopped the whole server (the POST p99 outliers of stops
 *   16–19).
 * * Sharded into 256 Maps, a load of a million records took 1.2 s of Map
 *   `set`s (against 0.4 s here): their growing tables were garbage for the
 *   young generation. A Map also takes 28–56 bytes per entry, these tables
 *   16–32.
 *
 * So the index is one IdShard while the table is small (up to SHARDED_FROM
 * records) and SHARD_COUNT of them from then on, each id in the one the top
 * bits of its hash pick. Each grows on its own, at a 256th of the size, so
 * the longest stall is a 256th too (a million records rehash about 4,000
 * entries at a time, from the stored hashes: no id is hashed again);
 * becoming sharded moves SHARDED_FROM entries once.
 *
 * The hash is FNV-1a over the whole id from a seed picked at start-up, so
 * positions differ from one process to the next (as V8's own string hash,
 * which a Map uses, is seeded; neither is a keyed hash that resists ids
 * crafted to collide), then mixed (murmur3's finalizer) so that both its
 * top bits (the shard) and its low bits (the position) are spread.
 *
 * Reading every record walks the slots: in the order the records were
 * added, which is also the order they lie in memory after a load (a walk
 * in hash order took a full scan of a million records from 92 to 450 ms:
 * a cache miss per record). A removal leaves a hole; a chunk that is more
 * than half holes is compacted, which moves at most SLOT_CHUNK entries.
 */
import { randomInt } from 'node:crypto'
import { assertionFailed } from '../assert.js'
import type { Rec } from '../domain/schema.js'

const SHARD_BITS = 8
/** The number of IdShards of a sharded table's index. */
export const SHARD_COUNT = 2 ** SHARD_BITS
/** The size at which a table's index becomes sharded. */
export const SHARDED_FROM = 65_536
/** Slots per chunk (a power of two: a slot number is chunk × SLOT_CHUNK + offset). */
const SLOT_BITS = 12
const SLOT_CHUNK = 2 ** SLOT_BITS
/** Positions of a new IdShard (a power of two). */
const FIRST_CAPACITY = 8

/** The process's hash seed (see the top). */
const HASH_SEED = randomInt(2 ** 32) | 0

/** The id's hash (see the top). */
function hashOf(id: string, seed: number): number {
  let hash = seed ^ 0x811c9dc5
  for (let at = 0; at < id.length; at += 1) hash = Math.imul(hash ^ id.charCodeAt(at), 0x01000193)
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b)
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35)
  return hash ^ (hash >>> 16)
}

/** One open-addressing table of id hash → slot + 1 (see the top). Positions are `hash & mask` onwards. */
class IdShard {
  hashes: Int32Array
  slots: Int32Array
  size = 0

  constructor(capacity = FIRST_CAPACITY) {
    this.hashes = new Int32Array(capacity)
    this.slots = new Int32Array(capacity)
  }

  /** Puts an entry whose id is not in the shard, growing first when the shard would be more than half full. */
  add(hash: number, slot: number): void {
    if ((this.size + 1) * 2 > this.slots.length) this.grow()
    this.place(hash, slot + 1)
    this.size += 1
  }

  /** Takes the entry at `position` out, shifting back the entries after it that probing would no longer reach. */
  removeAt(position: number): void {
    const mask = this.slots.length - 1
    let free = position
    for (let next = (free + 1) & mask; this.slots[next] !== 0; next = (next + 1) & mask) {
      const home = (this.hashes[next] as number) & mask
      // The entry at `next` stays unless `free` lies on its probe path (cyclically from home to next).
      const stays = free <= next ? free < home && home <= next : free < home || home <= next
      if (stays) continue
      this.hashes[free] = this.hashes[next] as number
      this.slots[free] = this.slots[next] as number
      free = next
    }
    this.slots[free] = 0
    this.size -= 1
  }

  private place(hash: number, slotPlusOne: number): void {
    const mask = this.slots.length - 1
    let position = hash & mask
    while (this.slots[position] !== 0) position = (position + 1) & mask
    this.hashes[position] = hash
    this.slots[position] = slotPlusOne
  }

  private grow(): void {
    const { hashes, slots } = this
    this.hashes = new Int32Array(slots.length * 2)
    this.slots = new Int32Array(slots.length * 2)
    for (let position = 0; position < slots.length; position += 1) {
      if (slots[position] !== 0) this.place(hashes[position] as number, slots[position] as number)
    }
  }

  /** Every entry: its hash and slot. */
  *entries(): IterableIterator<[number, number]> {
    for (let position = 0; position < this.slots.length; position += 1) {
      if (this.slots[position] !== 0) yield [this.hashes[position] as number, (this.slots[position] as number) - 1]
    }
  }
}

export class RecordTable {
  /** id → slot: one IdShard, or SHARD_COUNT of them once the table is large. */
  private index: IdShard[] = [new IdShard()]
  /** The records in the order they were added; null where one was removed. */
  private readonly slots: (Rec | null)[][] = [[]]
  /** Holes per chunk. */
  private readonly holes: number[] = [0]
  private count = 0

  /** `shardedFrom` and `seed` other than the defaults are for tests (an early split, a reproducible hash). */
  constructor(
    private readonly shardedFrom = SHARDED_FROM,
    private readonly seed = HASH_SEED,
  ) {}

  get size(): number {
    return this.count
  }

  private shardOf(hash: number): IdShard {
    return (this.index.length === 1 ? this.index[0] : this.index[hash >>> (32 - SHARD_BITS)]) as IdShard
  }

  private recordAt(slot: number): Rec {
    return (this.slots[slot >>> SLOT_BITS] as (Rec | null)[])[slot & (SLOT_CHUNK - 1)] as Rec
  }

  /** Where `id` is in `shard`: its position, or -1 - the free position where probing for it stopped. */
  private find(shard: IdShard, id: string, hash: number): number {
    const { hashes, slots } = shard
    const mask = slots.length - 1
    for (let position = hash & mask; ; position = (position + 1) & mask) {
      const slotPlusOne = slots[position] as number
      if (slotPlusOne === 0) return -1 - position
      if (hashes[position] === hash && this.recordAt(slotPlusOne - 1).id === id) return position
    }
  }

  get(id: string): Rec | undefined {
    const hash = hashOf(id, this.seed)
    const shard = this.shardOf(hash)
    const position = this.find(shard, id, hash)
    return position < 0 ? undefined : this.recordAt((shard.slots[position] as number) - 1)
  }

  /** Adds or replaces (a replaced record keeps its place): the record replaced, undefined when the id is new. */
  set(rec: Rec): Rec | undefined {
    const hash = hashOf(rec.id, this.seed)
    const shard = this.shardOf(hash)
    const position = this.find(shard, rec.id, hash)
    if (position < 0) {
      this.add(shard, hash, rec)
      return undefined
    }
    const slot = (shard.slots[position] as number) - 1
    const chunk = this.slots[slot >>> SLOT_BITS] as (Rec | null)[]
    const before = chunk[slot & (SLOT_CHUNK - 1)] as Rec
    chunk[slot & (SLOT_CHUNK - 1)] = rec
    return before
  }

  /** Adds a record whose id should be new (loading a snapshot); false, and the table as it was, when the id is there. */
  insert(rec: Rec): boolean {
    const hash = hashOf(rec.id, this.seed)
    const shard = this.shardOf(hash)
    if (this.find(shard, rec.id, hash) >= 0) return false
    this.add(shard, hash, rec)
    return true
  }

  private add(shard: IdShard, hash: number, rec: Rec): void {
    let last = this.slots.length - 1
    if ((this.slots[last] as (Rec | null)[]).length === SLOT_CHUNK) {
      this.slots.push([])
      this.holes.push(0)
      last += 1
    }
    const chunk = this.slots[last] as (Rec | null)[]
    shard.add(hash, last * SLOT_CHUNK + chunk.length)
    chunk.push(rec)
    this.count += 1
    if (this.index.length === 1 && this.count >= this.shardedFrom) this.shard()
  }

  /** Removes the record with this id; the removed record, if there was one. */
  delete(id: string): Rec | undefined {
    const hash = hashOf(id, this.seed)
    const shard = this.shardOf(hash)
    const position = this.find(shard, id, hash)
    if (position < 0) return undefined
    const slot = (shard.slots[position] as number) - 1
    shard.removeAt(position)
    const chunkNumber = slot >>> SLOT_BITS
    const chunk = this.slots[chunkNumber] as (Rec | null)[]
    const rec = chunk[slot & (SLOT_CHUNK - 1)] as Rec
    chunk[slot & (SLOT_CHUNK - 1)] = null
    this.count -= 1
    const holes = (this.holes[chunkNumber] as number) + 1
    this.holes[chunkNumber] = holes
    if (holes * 2 > chunk.length) this.compact(chunkNumber)
    return rec
  }

  values(): IterableIterator<Rec> {
    return new SlotWalk(this.slots)
  }

  /** Closes the holes of a chunk: its records move down, keeping their order. The last chunk may then take more. */
  private compact(chunkNumber: number): void {
    const chunk = this.slots[chunkNumber] as (Rec | null)[]
    let kept = 0
    for (const rec of chunk) {
      if (rec === null) continue
      const hash = hashOf(rec.id, this.seed)
      const shard = this.shardOf(hash)
      const position = this.find(shard, rec.id, hash)
      if (position < 0) assertionFailed(`RecordTable: ${rec.id} is in a slot but not indexed`)
      chunk[kept] = rec
      shard.slots[position] = chunkNumber * SLOT_CHUNK + kept + 1
      kept += 1
    }
    chunk.length = kept
    this.holes[chunkNumber] = 0
  }

  private shard(): void {
    const single = this.index[0] as IdShard
    // Each shard starts a quarter full, so none grows at once.
    const capacity = 2 ** Math.ceil(Math.log2(Math.max(FIRST_CAPACITY, (4 * this.count) / SHARD_COUNT)))
    this.index = Array.from({ length: SHARD_COUNT }, () => new IdShard(capacity))
    for (const [hash, slot] of single.entries()) this.shardOf(hash).add(hash, slot)
    let total = 0
    for (const shard of this.index) total += shard.size
    if (total !== this.count) assertionFailed(`RecordTable: ${total} ids in the shards, ${this.count} counted`)
  }
}

/**
 * The records of chunks of slots in order, skipping holes (also the sorted
 * chunks of sortedRecords.ts, which have none). An iterator object rather
 * than a generator: a walk of a million records took 5 ms with it and
 * 27–72 ms with a generator (a full scan is such a walk).
 */
export class SlotWalk implements IterableIterator<Rec> {
  private chunk = 0
  private at = 0

  constructor(private readonly slots: readonly (Rec | null)[][]) {}

  [Symbol.iterator](): IterableIterator<Rec> {
    return this
  }

  next(): IteratorResult<Rec> {
    for (;;) {
      const chunk = this.slots[this.chunk]
      if (chunk === undefined) return { done: true, value: undefined }
      if (this.at < chunk.length) {
        const rec = chunk[this.at]
        this.at += 1
        if (rec !== null && rec !== undefined) return { done: false, value: rec }
      } else {
        this.chunk += 1
        this.at = 0
      }
    }
  }
}
