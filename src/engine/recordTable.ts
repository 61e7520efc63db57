/*
 * A collection's primary index: id → record, in the order the records
 * were added, that never rehashes a large table at once.
 *
 * A V8 Map doubles its hash table when the table is full, and moves every
 * entry into the new one in the same call. On the benchmark VM the
 * 1,048,577th `set` of a Map of UUID keys took 502 ms, and the 524,289th
 * about half that: the whole server stopped while one tenant crossed a
 * power of two (the POST p99 outliers of 200–330 ms measured since stop 16
 * were this: a benchmark run that inserted more than 48,576 records into
 * the million-record tenant crossed 2^20).
 *
 * So the records sit in `slots`, chunks of SLOT_CHUNK positions filled in
 * the order records are added (a replaced record keeps its slot), and the
 * index from id to slot is one Map while the table is small (up to
 * SHARDED_FROM records) and SHARD_COUNT Maps from then on, each id in the
 * one its hash picks. Each Map grows on its own, at a 256th of the size, so
 * the largest stall is a 256th too (a table of a million records rehashes
 * about 4,000 entries at a time); becoming sharded moves SHARDED_FROM
 * entries once.
 *
 * Reading every record walks the slots: in the order the records were
 * added, which is also the order they lie in memory after a load (a walk
 * in hash order took a full scan of a million records from 92 to 450 ms:
 * a cache miss per record). A removal leaves a hole; a chunk that is more
 * than half holes is compacted, which moves at most SLOT_CHUNK entries.
 */
import { assertionFailed } from '../domain/errors.js'
import type { Rec } from '../domain/schema.js'

const SHARD_BITS = 8
/** The number of Maps of a sharded table's index. */
export const SHARD_COUNT = 2 ** SHARD_BITS
/** The size at which a table's index becomes sharded. */
export const SHARDED_FROM = 65_536
/** Slots per chunk (a power of two: a slot number is chunk × SLOT_CHUNK + offset). */
const SLOT_BITS = 12
const SLOT_CHUNK = 2 ** SLOT_BITS
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
  /** id → slot number: one Map, or SHARD_COUNT of them once the table is large. */
  private index: Map<string, number>[] = [new Map()]
  /** The records in the order they were added; null where one was removed. */
  private readonly slots: (Rec | null)[][] = [[]]
  /** Holes per chunk. */
  private readonly holes: number[] = [0]
  private count = 0

  constructor(private readonly shardedFrom = SHARDED_FROM) {}

  get size(): number {
    return this.count
  }

  private mapOf(id: string): Map<string, number> {
    return (this.index.length === 1 ? this.index[0] : this.index[shardOf(id)]) as Map<string, number>
  }

  get(id: string): Rec | undefined {
    const slot = this.mapOf(id).get(id)
    return slot === undefined ? undefined : ((this.slots[slot >>> SLOT_BITS] as (Rec | null)[])[slot & (SLOT_CHUNK - 1)] as Rec)
  }

  /** Adds or replaces (a replaced record keeps its place): the record replaced, undefined when the id is new. One lookup. */
  set(rec: Rec): Rec | undefined {
    const map = this.mapOf(rec.id)
    const slot = map.get(rec.id)
    if (slot === undefined) {
      map.set(rec.id, this.nextSlot())
      this.push(rec)
      return undefined
    }
    const chunk = this.slots[slot >>> SLOT_BITS] as (Rec | null)[]
    const before = chunk[slot & (SLOT_CHUNK - 1)] as Rec
    chunk[slot & (SLOT_CHUNK - 1)] = rec
    return before
  }

  /**
   * Adds a record whose id should be new (loading a snapshot, building a
   * table of distinct records) without looking it up first: the Map's size
   * tells whether the id was there, so a million loads cost a million Map
   * `set`s and no `get`s. False when the id was there already; the table is
   * then left as it was (found by a walk of the slots: a broken snapshot's
   * path, not a load's).
   */
  insert(rec: Rec): boolean {
    const map = this.mapOf(rec.id)
    const sizeBefore = map.size
    map.set(rec.id, this.nextSlot())
    if (map.size === sizeBefore) {
      map.set(rec.id, this.slotHolding(rec.id))
      return false
    }
    this.push(rec)
    return true
  }

  /** The slot number the next added record takes (a new chunk when the last is full). */
  private nextSlot(): number {
    let last = this.slots.length - 1
    if ((this.slots[last] as (Rec | null)[]).length === SLOT_CHUNK) {
      this.slots.push([])
      this.holes.push(0)
      last += 1
    }
    return last * SLOT_CHUNK + (this.slots[last] as (Rec | null)[]).length
  }

  /** Puts `rec` in the slot nextSlot gave. */
  private push(rec: Rec): void {
    ;(this.slots[this.slots.length - 1] as (Rec | null)[]).push(rec)
    this.count += 1
    if (this.index.length === 1 && this.count >= this.shardedFrom) this.shard()
  }

  /** The slot of the record with this id, by a walk of the slots. */
  private slotHolding(id: string): number {
    for (let chunkNumber = 0; chunkNumber < this.slots.length; chunkNumber += 1) {
      const offset = (this.slots[chunkNumber] as (Rec | null)[]).findIndex((rec) => rec?.id === id)
      if (offset >= 0) return chunkNumber * SLOT_CHUNK + offset
    }
    return assertionFailed(`RecordTable: ${id} is indexed but in no slot`)
  }

  /** Removes the record with this id; the removed record, if there was one. */
  delete(id: string): Rec | undefined {
    const map = this.mapOf(id)
    const slot = map.get(id)
    if (slot === undefined) return undefined
    const chunkNumber = slot >>> SLOT_BITS
    const chunk = this.slots[chunkNumber] as (Rec | null)[]
    const rec = chunk[slot & (SLOT_CHUNK - 1)] as Rec
    chunk[slot & (SLOT_CHUNK - 1)] = null
    map.delete(id)
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
      chunk[kept] = rec
      this.mapOf(rec.id).set(rec.id, chunkNumber * SLOT_CHUNK + kept)
      kept += 1
    }
    chunk.length = kept
    this.holes[chunkNumber] = 0
  }

  private shard(): void {
    const single = this.index[0] as Map<string, number>
    this.index = Array.from({ length: SHARD_COUNT }, () => new Map<string, number>())
    for (const [id, slot] of single) (this.index[shardOf(id)] as Map<string, number>).set(id, slot)
    let total = 0
    for (const map of this.index) total += map.size
    if (total !== this.count) assertionFailed(`RecordTable: ${total} ids in the shards, ${this.count} counted`)
  }
}

/**
 * The records of the slots in order, skipping holes. An iterator object
 * rather than a generator: a walk of a million records took 5 ms with it
 * and 27–72 ms with a generator (a full scan is such a walk).
 */
class SlotWalk implements IterableIterator<Rec> {
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
