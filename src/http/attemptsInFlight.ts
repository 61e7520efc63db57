/*
 * Login attempts whose password is being checked, per limit key (a login
 * name, a client address), and the attempts waiting for one of them to end.
 *
 * The failed-login limit counts an attempt before its password is checked
 * and gives the slot back when the password proves right
 * (rateLimiter.ts, reserveLoginAttempt), so that parallel guesses cannot
 * all be checked before the first failure counts. That also fills a key
 * with right passwords being checked: twelve people behind one address
 * logging in at once made the last two wait "60 s" for failures that never
 * happened. So an attempt that finds its key full while attempts of that
 * key are in flight waits for the next of them to end (`nextEnd`) and
 * looks again: a right password makes room, a wrong one may block the key.
 *
 * Bounded: at most MAX_WAITING attempts wait per key (the others are
 * refused at once), a key is forgotten when nothing is in flight or
 * waiting, and a wait ends after the time its caller allows.
 */

/** Attempts that may wait at once for one key. */
export const MAX_WAITING = 64

interface KeyState {
  inFlight: number
  waiting: (() => void)[]
}

export class AttemptsInFlight {
  private readonly keys = new Map<string, KeyState>()

  /** Attempts of `key` being checked now. */
  count(key: string): number {
    return this.keys.get(key)?.inFlight ?? 0
  }

  begin(key: string): void {
    this.stateOf(key).inFlight += 1
  }

  /** An attempt of `key` ended: every attempt waiting for that looks again. */
  end(key: string): void {
    const state = this.keys.get(key)
    if (state === undefined || state.inFlight === 0) return
    state.inFlight -= 1
    const waiting = state.waiting
    state.waiting = []
    this.forgetIfIdle(key, state)
    for (const wake of waiting) wake()
  }

  /** Whether one more attempt may wait for `key`. */
  canWait(key: string): boolean {
    return (this.keys.get(key)?.waiting.length ?? 0) < MAX_WAITING
  }

  /** Resolves when the next attempt of `key` ends, or after `timeoutMs`. */
  nextEnd(key: string, timeoutMs: number): Promise<void> {
    const state = this.stateOf(key)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const at = state.waiting.indexOf(wake)
        if (at >= 0) state.waiting.splice(at, 1)
        this.forgetIfIdle(key, state)
        resolve()
      }, timeoutMs)
      const wake = () => {
        clearTimeout(timer)
        resolve()
      }
      state.waiting.push(wake)
    })
  }

  private stateOf(key: string): KeyState {
    let state = this.keys.get(key)
    if (state === undefined) {
      state = { inFlight: 0, waiting: [] }
      this.keys.set(key, state)
    }
    return state
  }

  private forgetIfIdle(key: string, state: KeyState): void {
    if (state.inFlight === 0 && state.waiting.length === 0 && this.keys.get(key) === state) this.keys.delete(key)
  }
}
