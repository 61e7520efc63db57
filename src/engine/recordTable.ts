/*
 * A collection's primary index: id → record, that never rehashes a large
 * table at once.
 *
 * A V8 Map doubles its hash table when the table is full, and moves every
 * entry into the new one in the same call. On the benchmark VM the
 * 1,048,577th `set` of a Map of UUID keys took 502 ms, and the 524,289th
 * about half that: the whole server stopped while one tenant crossed a
 * power of two (the POST p99 outliers of 200–330 ms measured since stop 16
 * were this: a benchmark run that inserted more than 48,576 records into
 * the million-record tenant crossed 2^20).
 *
 * So a table holds one Map while it is small (up to SHARDED_FROM records)
 * and from then on SHARD_COUNT Maps, each id in the one its hash picks;
 * each Map grows on its own, at a 256th of the size, so the largest stall
 * is a 256th too (a table of a million records rehashes about 4,000
 * entries at a time). Becoming sharded moves SHARDED_FROM records once.
 *
 * Order: records come in the order they were added while the table is one
 * Map (a replaced record keeps its place). A sharded table gives them
 * shard by shard, each shard in the order its records were added: the
 * order of a list without `$orderby` over a large collection. It is stable
 * while the table is unchanged, and the same after a restart (a snapshot
 * writes the records in this order, and loading adds them in it).
 */
import { assertionFailed } from '../domain/errors.js'
import type { Rec } from '../domain/schema.js'

const SHARD_BITS = 8
/** The number of Maps of a sharded table. */
export const SHARD_COUNT = 2 ** SHARD_BITS
/** The size at which a table becomes sharded. */
export const SHARDED_FROM = 65_536

/** Characters of an id's end that pick its shard (ids end in random characters). */
const HASHED_CHARS = 6

/**
 * The shard of an id: the top bits of an FNV-1a hash of its last
 * characters. (A `* 31` hash masked to its low bits spread a million UUIDs
 * over 2,914–4,987 a shard, so a hundred shards had doubled their tables;
 * this one 3,746–4,082.)
 */
function shardOf(id: string): number {
  let hash = 0x811c9dc5
  for (let at = Math.max(0, id.length - HASHED_CHARS); at < id.length; at += 1) hash = Math.imul(hash ^ id.charCodeAt(at), 0x01000193)
  return hash >>> (32 - SHARD_BITS)
}

export class RecordTable {
  /** The one Map of a small table; null once sharded. */
  private single: Map<string, Rec> | null = new Map()
  private shards: Map<string, Rec>[] = []
  private count = 0

  constructor(private readonly shardedFrom = SHARDED_FROM) {}

  get size(): number {
    return this.count
  }

  get(id: string): Rec | undefined {
    return (this.single ?? (this.shards[shardOf(id)] as Map<string, Rec>)).get(id)
  }

  /** Adds or replaces (a replaced record keeps its place); true when the id is new. */
  set(rec: Rec): boolean {
    const map = this.single ?? (this.shards[shardOf(rec.id)] as Map<string, Rec>)
    const sizeBefore = map.size
    map.set(rec.id, rec)
    if (map.size === sizeBefore) return false
    this.count += 1
    if (this.single !== null && this.count >= this.shardedFrom) this.shard(this.single)
    return true
  }

  /** Removes the record with this id; the removed record, if there was one. */
  delete(id: string): Rec | undefined {
    const map = this.single ?? (this.shards[shardOf(id)] as Map<string, Rec>)
    const rec = map.get(id)
    if (rec === undefined) return undefined
    map.delete(id)
    this.count -= 1
    return rec
  }

  values(): IterableIterator<Rec> {
    return this.single === null ? this.shardValues() : this.single.values()
  }

  private *shardValues(): IterableIterator<Rec> {
    for (const shard of this.shards) yield* shard.values()
  }

  private shard(single: Map<string, Rec>): void {
    this.shards = Array.from({ length: SHARD_COUNT }, () => new Map<string, Rec>())
    for (const rec of single.values()) (this.shards[shardOf(rec.id)] as Map<string, Rec>).set(rec.id, rec)
    this.single = null
    let total = 0
    for (const shard of this.shards) total += shard.size
    if (total !== this.count) assertionFailed(`RecordTable: ${total} records in the shards, ${this.count} counted`)
  }
}
