/*
 * A counter of events per key in fixed windows, in memory (abuse limits are
 * not tenant state and are never logged; a restart forgets them).
 *
 * WindowCounter counts events per key in fixed windows: the first event of
 * a key opens a window of `windowMs`; past `limit` events in it the key is
 * refused until the window ends (`blockMs` after the limit is reached, when
 * given). Memory is bounded: past `maxKeys` keys, ended windows are swept;
 * if that is not enough the oldest keys go (a Map iterates in insertion
 * order, and a key is re-inserted when it opens a new window).
 */

export const MAX_TRACKED_KEYS = 100_000

interface Window {
  startedAt: number
  count: number
  /** Set once the limit is reached: refused until then. */
  blockedUntil: number | null
}

export class WindowCounter {
  private readonly windows = new Map<string, Window>()

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly blockMs: number | null = null,
    private readonly maxKeys = MAX_TRACKED_KEYS,
  ) {}

  get size(): number {
    return this.windows.size
  }

  /** Milliseconds until the key may act again, 0 when it may now. */
  waitMs(key: string, now: number): number {
    const window = this.current(key, now)
    if (window === undefined) return 0
    if (window.blockedUntil !== null) return Math.max(0, window.blockedUntil - now)
    return window.count >= this.limit ? window.startedAt + this.windowMs - now : 0
  }

  /** Counts one event; returns the wait that applies after it (0: still within the limit). */
  hit(key: string, now: number): number {
    let window = this.current(key, now)
    if (window === undefined) {
      window = { startedAt: now, count: 0, blockedUntil: null }
      this.windows.set(key, window)
      this.bound(now)
    }
    window.count += 1
    if (window.count > this.limit && this.blockMs === null) return window.startedAt + this.windowMs - now
    if (window.count >= this.limit && this.blockMs !== null) {
      window.blockedUntil ??= now + this.blockMs
      return window.blockedUntil - now
    }
    return 0
  }

  /** The events counted in the key's live window and when it ends (epoch ms); none counted: 0, and a window from now. */
  usage(key: string, now: number): { count: number; endsAt: number } {
    const window = this.current(key, now)
    if (window === undefined) return { count: 0, endsAt: now + this.windowMs }
    return { count: window.count, endsAt: window.blockedUntil ?? window.startedAt + this.windowMs }
  }

  /**
   * Takes back one event counted at `countedAt` (a reserved slot that turned
   * out not to count). Nothing happens once that window has ended; a block
   * the event caused is lifted when the count is under the limit again.
   */
  release(key: string, countedAt: number, now: number): void {
    const window = this.current(key, now)
    if (window === undefined || window.startedAt > countedAt || window.count === 0) return
    window.count -= 1
    if (window.count < this.limit) window.blockedUntil = null
  }

  /** The key's live window; an ended one is dropped. */
  private current(key: string, now: number): Window | undefined {
    const window = this.windows.get(key)
    if (window === undefined) return undefined
    if (!this.ended(window, now)) return window
    this.windows.delete(key)
    return undefined
  }

  private ended(window: Window, now: number): boolean {
    if (window.blockedUntil !== null) return window.blockedUntil <= now
    return window.startedAt + this.windowMs <= now
  }

  /** Past maxKeys: drop ended windows, then the oldest keys down to 90 %, so the sweep is rare. */
  private bound(now: number): void {
    if (this.windows.size <= this.maxKeys) return
    for (const [key, window] of this.windows) if (this.ended(window, now)) this.windows.delete(key)
    const target = Math.floor(this.maxKeys * 0.9)
    for (const key of this.windows.keys()) {
      if (this.windows.size <= target) break
      this.windows.delete(key)
    }
  }
}
