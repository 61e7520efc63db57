/*
 * Abuse limits, in memory per process (they are not tenant state and are
 * never logged; a restart forgets them).
 *
 * WindowCounter counts events per key in fixed windows: the first event of
 * a key opens a window of `windowMs`; past `limit` events in it the key is
 * refused until the window ends (`blockMs` after the limit is reached, when
 * given). Memory is bounded: past `maxKeys` keys, ended windows are swept;
 * if that is not enough the oldest keys go (a Map iterates in insertion
 * order, and a key is re-inserted when it opens a new window).
 *
 * Two policies use it:
 *   - requests: every authenticated request of a user in a tenant
 *     (RATE_LIMIT_REQUESTS per RATE_LIMIT_WINDOW_MS) → 429 TL01-9010;
 *   - login attempts: per login name and per client address
 *     (LOGIN_FAILURES_ALLOWED per LOGIN_FAILURE_WINDOW_MS, then refused
 *     for as long again) → 429 before the password is even checked. An
 *     attempt takes its slot before its password is checked (in the same
 *     event-loop turn as the limit check, so parallel guesses cannot all
 *     pass the check first) and gives it back once the password proved
 *     right: what stays counted are the failures. An attempt that finds a
 *     key full while attempts of it are being checked waits (at most
 *     LOGIN_WAIT_MAX_MS) for one of them to end instead of being refused:
 *     right passwords in flight are no failures (attemptsInFlight.ts).
 * A limit of 0 turns its policy off.
 * Every 429 carries `Retry-After` in whole seconds.
 */
import type { Config } from '../config.js'
import { ApiError } from '../domain/errors.js'
import { AttemptsInFlight } from './attemptsInFlight.js'
import type { Call } from './call.js'

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

export interface AbuseLimits {
  readonly requests: WindowCounter
  readonly failedLoginsByName: WindowCounter
  readonly failedLoginsByAddress: WindowCounter
  /** Login attempts being checked, per key of either login limit (the keys do not overlap: a name key holds a NUL). */
  readonly loginsInFlight: AttemptsInFlight
}

export function abuseLimits(config: Config): AbuseLimits {
  const failures = () => new WindowCounter(config.loginFailuresAllowed, config.loginFailureWindowMs, config.loginFailureWindowMs)
  return {
    requests: new WindowCounter(config.rateLimitRequests, config.rateLimitWindowMs),
    failedLoginsByName: failures(),
    failedLoginsByAddress: failures(),
    loginsInFlight: new AttemptsInFlight(),
  }
}

function tooManyRequests(waitMs: number, message: string): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000))
  return new ApiError('TL01-9010', `${message}; retry in ${seconds} s`, null, [], { 'Retry-After': String(seconds) })
}

/** Counts an authenticated request of the caller; 429 past the limit of its user in its tenant. */
export function meterRequest(call: Call): void {
  const { config, limits } = call.services
  if (call.principal === null || config.rateLimitRequests === 0) return
  const wait = limits.requests.hit(`${call.tenantName ?? ''}\u0000${call.principal.userId}`, Date.now())
  if (wait > 0) throw tooManyRequests(wait, `more than ${config.rateLimitRequests} requests in ${config.rateLimitWindowMs} ms`)
}

function loginKeys(call: Call, name: string): { byName: string; byAddress: string } {
  return { byName: `${call.tenantName ?? ''}\u0000${name}`, byAddress: call.request.remoteAddress() }
}

/** A login attempt that holds its slot in both login limits until it is settled. */
export interface LoginAttempt {
  /** The password was checked: a right one gives the slot back, a wrong one leaves it counted. Once; later calls do nothing. */
  settle(succeeded: boolean): void
}

const UNLIMITED_ATTEMPT: LoginAttempt = { settle() {} }

/** The longest a login attempt waits for attempts in flight to make room (a few scrypt checks under load). */
export const LOGIN_WAIT_MAX_MS = 10_000

/**
 * Counts a login attempt for its name and client address before the
 * password is checked; 429 while either is blocked by failures. While a
 * key is full with attempts still being checked, waits for them (see the
 * top). The caller settles the attempt once the password is checked,
 * whatever the outcome.
 */
export async function reserveLoginAttempt(call: Call, name: string): Promise<LoginAttempt> {
  const { config, limits } = call.services
  if (config.loginFailuresAllowed === 0) return UNLIMITED_ATTEMPT
  const { byName, byAddress } = loginKeys(call, name)
  const limited: [WindowCounter, string][] = [
    [limits.failedLoginsByName, byName],
    [limits.failedLoginsByAddress, byAddress],
  ]
  const inFlight = limits.loginsInFlight
  const giveUpAt = Date.now() + LOGIN_WAIT_MAX_MS
  for (;;) {
    const now = Date.now()
    const full = limited.map(([counter, key]) => ({ key, waitMs: counter.waitMs(key, now) })).filter((limit) => limit.waitMs > 0)
    if (full.length === 0) break
    const wait = Math.max(...full.map((limit) => limit.waitMs))
    if (full.some((limit) => inFlight.count(limit.key) === 0)) throw tooManyRequests(wait, 'too many failed logins')
    const { key } = full[0] as { key: string }
    if (now >= giveUpAt || !inFlight.canWait(key)) throw tooManyRequests(wait, 'too many logins at once')
    await inFlight.nextEnd(key, giveUpAt - now)
  }
  // The check above and these hits run in one event-loop turn: no other attempt can take the room meanwhile.
  const countedAt = Date.now()
  for (const [counter, key] of limited) {
    counter.hit(key, countedAt)
    inFlight.begin(key)
  }
  let settled = false
  return {
    settle(succeeded) {
      if (settled) return
      settled = true
      const now = Date.now()
      for (const [counter, key] of limited) {
        if (succeeded) counter.release(key, countedAt, now)
        inFlight.end(key)
      }
    },
  }
}
