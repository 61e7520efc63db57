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

  /** Everything queued as one buffer (the one buffer itself, not a copy, when there is one), taken out; undefined when empty. */
  takeAll(): Buffer | undefined {
    if (this.length <= 1) return this.shift()
    const all = Buffer.concat(this.head === 0 ? this.items : this.items.slice(this.head), this.bytes)
    this.clear()
    return all
  }

  /** Drops everything queued. */
  clear(): void {
    this.items = []
    this.head = 0
    this.bytes = 0
  }
}
