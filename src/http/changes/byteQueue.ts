/*
 * The events a feed stream holds for its client, in order, with their
 * bytes counted (webSocketFeed.ts, eventStream.ts). The buffers are those
 * every stream of an event shares (made once per event), so a queue holds
 * references, not copies. A plain array with a moving head: taking from the
 * front is O(1), and the array is compacted once most of it was taken.
 */
/** Taken places at the front after which the array is compacted (when they are also most of it). */
const COMPACT_AFTER = 1024

export class ByteQueue {
  private items: Buffer[] = []
  private head = 0
  /** Bytes of the buffers in the queue. */
  bytes = 0

  get length(): number {
    return this.items.length - this.head
  }

  push(buffer: Buffer): void {
    this.items.push(buffer)
    this.bytes += buffer.byteLength
  }

  /** The first buffer, taken out; undefined when empty. */
  shift(): Buffer | undefined {
    if (this.head >= this.items.length) return undefined
    const buffer = this.items[this.head] as Buffer
    this.head += 1
    this.bytes -= buffer.byteLength
    if (this.head === this.items.length) this.clear()
    else if (this.head >= COMPACT_AFTER && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return buffer
  }

  /**
   * The buffers at the front as one buffer of at most `maxBytes` (the first one whole, however long; alone, itself
   * and not a copy), taken out; undefined when empty.
   */
  takeUpTo(maxBytes: number): Buffer | undefined {
    let count = 0
    let bytes = 0
    for (let index = this.head; index < this.items.length; index += 1) {
      const length = (this.items[index] as Buffer).byteLength
      if (count > 0 && bytes + length > maxBytes) break
      count += 1
      bytes += length
    }
    if (count <= 1) return this.shift()
    const taken = this.items.slice(this.head, this.head + count)
    for (let index = 0; index < count; index += 1) this.shift()
    return Buffer.concat(taken, bytes)
  }

  /** Drops everything queued. */
  clear(): void {
    this.items = []
    this.head = 0
    this.bytes = 0
  }
}
