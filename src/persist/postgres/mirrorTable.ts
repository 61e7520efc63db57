/*
 * One table of the directory mirror (directoryMirror.ts): the rows of a
 * PostgreSQL table held in memory so that DirectoryTable.get and getKeys
 * answer synchronously. Keys are kept sorted in LMDB's order (ports.ts,
 * DirectoryTable.getKeys): strings by code point, an array key element by
 * element; a range read is a binary search and a walk. A key goes in by a
 * binary search and one splice (the tables are small beside the log: a
 * row per tenant, per e-mail of a tenant, per pending confirmation).
 * Values are found through a Map on the key's text (its elements joined
 * by NUL, which no name holds).
 */

/** a < b: negative, a = b: 0, a > b: positive; by code point (UTF-16 order differs for astral characters). */
function compareText(a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let at = 0; at < length; at += 1) {
    const x = a.charCodeAt(at)
    const y = b.charCodeAt(at)
    if (x === y) continue
    // A surrogate (an astral code point) sorts above every other UTF-16 unit.
    const xHigh = x >= 0xd800 && x <= 0xdfff
    const yHigh = y >= 0xd800 && y <= 0xdfff
    if (xHigh !== yHigh) return xHigh ? 1 : -1
    return x - y
  }
  return a.length - b.length
}

export type MirrorKey = string | readonly string[]

/** LMDB's order of keys: a plain string before any array (ordered-binary), arrays element by element. */
function compareKeys(a: MirrorKey, b: MirrorKey): number {
  if (typeof a === 'string' || typeof b === 'string') {
    if (typeof a === 'string' && typeof b === 'string') return compareText(a, b)
    return typeof a === 'string' ? -1 : 1
  }
  const length = Math.min(a.length, b.length)
  for (let at = 0; at < length; at += 1) {
    const order = compareText(a[at] as string, b[at] as string)
    if (order !== 0) return order
  }
  return a.length - b.length
}

function textOf(key: MirrorKey): string {
  return typeof key === 'string' ? key : key.join('\u0000')
}

export class MirrorTable<K extends MirrorKey, V> {
  private readonly sorted: K[] = []
  private readonly values = new Map<string, V>()

  get size(): number {
    return this.sorted.length
  }

  get(key: K): V | undefined {
    return this.values.get(textOf(key))
  }

  set(key: K, value: V): void {
    const text = textOf(key)
    if (!this.values.has(text)) this.sorted.splice(this.indexOf(key), 0, key)
    this.values.set(text, value)
  }

  delete(key: K): boolean {
    if (!this.values.delete(textOf(key))) return false
    this.sorted.splice(this.indexOf(key), 1)
    return true
  }

  clear(): void {
    this.sorted.length = 0
    this.values.clear()
  }

  /** Keys from `start` (included) to `end` (excluded), in order. */
  *keys(range: { start?: K; end?: K } = {}): IterableIterator<K> {
    const { start, end } = range
    for (let at = start === undefined ? 0 : this.indexOf(start); at < this.sorted.length; at += 1) {
      const key = this.sorted[at] as K
      if (end !== undefined && compareKeys(key, end) >= 0) return
      yield key
    }
  }

  /** The first position whose key is not below `key`. */
  private indexOf(key: K): number {
    let low = 0
    let high = this.sorted.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compareKeys(this.sorted[middle] as K, key) < 0) low = middle + 1
      else high = middle
    }
    return low
  }
}
