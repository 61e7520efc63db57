/*
 * Known sources of a login: the (tenant, login name, client address) pairs
 * that logged in with the right password within the last `rememberMs`.
 * OWASP's device-cookie scheme ("Slow Down Online Guessing Attacks with
 * Device Cookies") with the client address standing in for the device: a
 * known source is refused only for its own failures, never because others
 * guessed at its account or from its address (rateLimiter.ts).
 *
 * In memory per process like the other abuse limits (a restart forgets
 * them; until a source logs in again it counts as unknown). Bounded: past
 * `maxKeys` the oldest entries go (a Map iterates in insertion order, and a
 * pair is re-inserted at each login).
 */
export class KnownSources {
  private readonly lastLoginAt = new Map<string, number>()

  constructor(
    private readonly rememberMs: number,
    private readonly maxKeys: number,
  ) {}

  get size(): number {
    return this.lastLoginAt.size
  }

  /** A right password from `key` at `now`. */
  remember(key: string, now: number): void {
    if (this.rememberMs === 0) return
    this.lastLoginAt.delete(key)
    this.lastLoginAt.set(key, now)
    if (this.lastLoginAt.size <= this.maxKeys) return
    const target = Math.floor(this.maxKeys * 0.9)
    for (const old of this.lastLoginAt.keys()) {
      if (this.lastLoginAt.size <= target) break
      this.lastLoginAt.delete(old)
    }
  }

  /** Whether `key` logged in within the last `rememberMs`. */
  has(key: string, now: number): boolean {
    const at = this.lastLoginAt.get(key)
    if (at === undefined) return false
    if (at + this.rememberMs > now) return true
    this.lastLoginAt.delete(key)
    return false
  }
}
