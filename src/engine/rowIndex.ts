/*
 * A collection's primary index: id → row, that never rehashes a large
 * table at once.
 *
 * An open-addressing hash table in typed arrays (IdShard): per position
 * the id's 32-bit hash and its row + 1 (0: free), linear probing, at most
 * half full, a removal shifting the entries after it back (no tombstones).
 * A probe compares hashes, and reads a row's id (idColumn.ts: four words,
 * for a UUID) only when the hashes are equal.
 *
 * Why not a V8 Map:
 * * A Map doubles its table when full and moves every entry in the same
 *   call: on the benchmark VM the 1,048,577th `set` of a Map of UUIDs took
 *   502 ms, and stopped the whole server.
 * * Sharded into 256 Maps, a load of a million records took 1.2 s of Map
 *   `set`s (against 0.4 s here): their growing tables were garbage for the
 *   young generation. A Map also takes 28–56 bytes per entry, these tables
 *   16–32.
 *
 * So the index is one IdShard while the table is small (up to SHARDED_FROM
 * rows) and SHARD_COUNT of them from then on, each id in the one the top
 * bits of its hash pick. Each grows on its own, at a 256th of the size, so
 * the longest stall is a 256th too (a million records rehash about 4,000
 * entries at a time, from the stored hashes: no id is hashed again);
 * becoming sharded moves SHARDED_FROM entries once.
 */
import { assertionFailed } from '../assert.js'
import type { IdColumn, IdProbe } from './idColumn.js'
import type { Steps } from './steps.js'

const SHARD_BITS = 8
/** The number of IdShards of a sharded index. */
const SHARD_COUNT = 2 ** SHARD_BITS
/** The size at which an index becomes sharded. */
const SHARDED_FROM = 65_536
/** Positions of a new IdShard (a power of two). */
const FIRST_CAPACITY = 8

/** One open-addressing table of id hash → row + 1 (see the top). Positions are `hash & mask` onwards. */
class IdShard {
  hashes: Int32Array
  rows: Int32Array
  size = 0

  constructor(capacity = FIRST_CAPACITY) {
    this.hashes = new Int32Array(capacity)
    this.rows = new Int32Array(capacity)
  }

  /** Puts an entry whose id is not in the shard, growing first when the shard would be more than half full. */
  add(hash: number, row: number): void {
    if ((this.size + 1) * 2 > this.rows.length) this.grow()
    this.place(hash, row + 1)
    this.size += 1
    // At most half full, so a probe always meets a free position.
    if (this.size * 2 > this.rows.length) assertionFailed(`IdShard: ${this.size} entries in ${this.rows.length} positions`)
  }

  /** Takes the entry at `position` out, shifting back the entries after it that probing would no longer reach. */
  removeAt(position: number): void {
    if (this.rows[position] === 0) assertionFailed(`IdShard: position ${position} removed, which holds no entry`)
    const mask = this.rows.length - 1
    let free = position
    for (let next = (free + 1) & mask; this.rows[next] !== 0; next = (next + 1) & mask) {
      const home = (this.hashes[next] as number) & mask
      // The entry at `next` stays unless `free` lies on its probe path (cyclically from home to next).
      const stays = free <= next ? free < home && home <= next : free < home || home <= next
      if (stays) continue
      this.hashes[free] = this.hashes[next] as number
      this.rows[free] = this.rows[next] as number
      free = next
    }
    this.rows[free] = 0
    this.size -= 1
    if (this.size < 0) assertionFailed('IdShard: more entries removed than added')
  }

  private place(hash: number, rowPlusOne: number): void {
    const mask = this.rows.length - 1
    let position = hash & mask
    while (this.rows[position] !== 0) position = (position + 1) & mask
    this.hashes[position] = hash
    this.rows[position] = rowPlusOne
  }

  private grow(): void {
    const { hashes, rows } = this
    this.hashes = new Int32Array(rows.length * 2)
    this.rows = new Int32Array(rows.length * 2)
    for (let position = 0; position < rows.length; position += 1) {
      if (rows[position] !== 0) this.place(hashes[position] as number, rows[position] as number)
    }
  }

  /** Every entry: its hash and row. */
  *entries(): IterableIterator<[number, number]> {
    for (let position = 0; position < this.rows.length; position += 1) {
      if (this.rows[position] !== 0) yield [this.hashes[position] as number, (this.rows[position] as number) - 1]
    }
  }

  arrayBytes(): number {
    return this.hashes.byteLength + this.rows.byteLength
  }
}

/** The positions an IdShard grows to while `count` entries are added to it: at most half full. */
function capacityFor(count: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(FIRST_CAPACITY, 2 * count)))
}

export class RowIndex {
  /** id → row: one IdShard, or SHARD_COUNT of them once the index is large. */
  private shards: IdShard[] = [new IdShard()]
  private count = 0

  /** `shardedFrom` other than the default is for tests (an early split). */
  constructor(
    private readonly ids: IdColumn,
    private readonly shardedFrom = SHARDED_FROM,
  ) {}

  get size(): number {
    return this.count
  }

  private shardOf(hash: number): IdShard {
    return (this.shards.length === 1 ? this.shards[0] : this.shards[hash >>> (32 - SHARD_BITS)]) as IdShard
  }

  /** Where the probed id is in `shard`: its position, or -1 - the free position where probing for it stopped. */
  private find(shard: IdShard, probe: IdProbe): number {
    const { hashes, rows } = shard
    const mask = rows.length - 1
    const hash = probe.hash
    for (let position = hash & mask; ; position = (position + 1) & mask) {
      const rowPlusOne = rows[position] as number
      if (rowPlusOne === 0) return -1 - position
      if (hashes[position] === hash && this.ids.matches(rowPlusOne - 1, probe)) return position
    }
  }

  /** The row of `id`; -1 when there is none. */
  rowOf(id: string): number {
    const probe = this.ids.probe(id)
    const shard = this.shardOf(probe.hash)
    const position = this.find(shard, probe)
    return position < 0 ? -1 : (shard.rows[position] as number) - 1
  }

  /** Indexes a row whose id was just written to the id column, when no other row has that id (one probe); false otherwise. */
  addNew(row: number): boolean {
    const probe = this.ids.probeRow(row)
    const shard = this.shardOf(probe.hash)
    if (this.find(shard, probe) >= 0) return false
    shard.add(probe.hash, row)
    this.count += 1
    if (this.shards.length === 1 && this.count >= this.shardedFrom) this.shard()
    return true
  }

  /**
   * Indexes `rows` (a snapshot's live rows, just loaded) into the empty index, as steps of about `stepRows` rows: every
   * row's hash first, then, for a large index, the rows grouped by shard and each shard made at its final size and
   * filled in one go (a shard of a million rows' index is 64 KB, which the processor's cache holds while it fills;
   * one row at a time, each row went to a shard of its own, two cache misses an id: 300 ns). Answers -1, or a row
   * whose id another row holds (the index is then unusable).
   */
  *addAllSteps(rows: Int32Array, stepRows: number): Steps<number> {
    if (this.count !== 0) assertionFailed('RowIndex: addAllSteps after ids were added')
    const hashes = new Int32Array(rows.length)
    for (let at = 0; at < rows.length; at += 1) {
      hashes[at] = this.ids.hashOfRow(rows[at] as number)
      if ((at + 1) % stepRows === 0) yield
    }
    if (rows.length < this.shardedFrom) {
      const shard = new IdShard(capacityFor(rows.length))
      this.shards = [shard]
      for (let at = 0; at < rows.length; at += 1) {
        if (!this.placeNew(shard, hashes[at] as number, rows[at] as number)) return rows[at] as number
        this.count += 1
        if ((at + 1) % stepRows === 0) yield
      }
      return -1
    }
    // The rows and their hashes grouped by shard (a counting sort), each group in the rows' order.
    const starts = new Int32Array(SHARD_COUNT + 1)
    for (let at = 0; at < hashes.length; at += 1) {
      const bound = ((hashes[at] as number) >>> (32 - SHARD_BITS)) + 1
      starts[bound] = (starts[bound] as number) + 1
      if ((at + 1) % stepRows === 0) yield
    }
    for (let shard = 0; shard < SHARD_COUNT; shard += 1) starts[shard + 1] = (starts[shard + 1] as number) + (starts[shard] as number)
    const next = starts.slice(0, SHARD_COUNT)
    const groupedHashes = new Int32Array(rows.length)
    const groupedRows = new Int32Array(rows.length)
    for (let at = 0; at < rows.length; at += 1) {
      const hash = hashes[at] as number
      const shard = hash >>> (32 - SHARD_BITS)
      const position = next[shard] as number
      groupedHashes[position] = hash
      groupedRows[position] = rows[at] as number
      next[shard] = position + 1
      if ((at + 1) % stepRows === 0) yield
    }
    yield
    const shards: IdShard[] = []
    for (let shard = 0; shard < SHARD_COUNT; shard += 1) {
      const into = new IdShard(capacityFor((starts[shard + 1] as number) - (starts[shard] as number)))
      shards.push(into)
      for (let position = starts[shard] as number; position < (starts[shard + 1] as number); position += 1) {
        if (!this.placeNew(into, groupedHashes[position] as number, groupedRows[position] as number)) return groupedRows[position] as number
      }
      this.count += into.size
      yield
    }
    this.shards = shards
    return -1
  }

  /** Puts `row` into `shard`, which has room (addAllSteps sized it), unless a row of the same id is there: false then. */
  private placeNew(shard: IdShard, hash: number, row: number): boolean {
    const { hashes, rows } = shard
    const mask = rows.length - 1
    let position = hash & mask
    for (let held = rows[position] as number; held !== 0; held = rows[position] as number) {
      if (hashes[position] === hash && this.ids.compare(held - 1, row) === 0) return false
      position = (position + 1) & mask
    }
    hashes[position] = hash
    rows[position] = row + 1
    shard.size += 1
    return true
  }

  /** Takes `id` out; its row, or -1 when it was not there. */
  delete(id: string): number {
    const probe = this.ids.probe(id)
    const shard = this.shardOf(probe.hash)
    const position = this.find(shard, probe)
    if (position < 0) return -1
    const row = (shard.rows[position] as number) - 1
    shard.removeAt(position)
    this.count -= 1
    return row
  }

  private shard(): void {
    const single = this.shards[0] as IdShard
    // Each shard starts a quarter full, so none grows at once.
    const capacity = 2 ** Math.ceil(Math.log2(Math.max(FIRST_CAPACITY, (4 * this.count) / SHARD_COUNT)))
    this.shards = Array.from({ length: SHARD_COUNT }, () => new IdShard(capacity))
    for (const [hash, row] of single.entries()) this.shardOf(hash).add(hash, row)
    let total = 0
    for (const shard of this.shards) total += shard.size
    if (total !== this.count) assertionFailed(`RowIndex: ${total} ids in the shards, ${this.count} counted`)
  }

  arrayBytes(): number {
    let bytes = 0
    for (const shard of this.shards) bytes += shard.arrayBytes()
    return bytes
  }
}
