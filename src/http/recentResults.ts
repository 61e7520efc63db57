/*
 * Results of a pure function of a string remembered for the next call with
 * the same string: a client sends the same token, the same list query,
 * request after request, and what is derived from them alone (a SHA-256, a
 * digest) need not be computed again. Bounded in entries (the oldest goes
 * first: a Map keeps insertion order) and in the length of a key kept (a
 * longer one is computed every time), so no client can make it hold more.
 */
export class RecentResults {
  private readonly results = new Map<string, string>()

  constructor(
    private readonly compute: (key: string) => string,
    private readonly maxEntries: number,
    private readonly maxKeyChars: number,
  ) {}

  /** `compute(key)`, remembered. */
  get(key: string): string {
    const known = this.results.get(key)
    if (known !== undefined) return known
    const result = this.compute(key)
    if (key.length <= this.maxKeyChars) {
      if (this.results.size >= this.maxEntries) this.results.delete(this.results.keys().next().value as string)
      this.results.set(key, result)
    }
    return result
  }

  /** How many results are kept. */
  get size(): number {
    return this.results.size
  }
}
