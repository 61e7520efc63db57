/*
 * Abuse limits, in memory per process (they are not tenant state and are
 * never logged; a restart forgets them).
 *
 * The counters (windowCounter.ts) of this server are its AbuseLimits
 * (abuseLimits.ts). Three policies use them:
 *   - requests: every authenticated request of a user in a tenant
 *     (RATE_LIMIT_REQUESTS per RATE_LIMIT_WINDOW_MS) → 429 TL01-9010;
 *     each answer tells the quota left (rateLimitHeaders.ts);
 *   - wrong API keys per client address (API_KEY_FAILURES_ALLOWED per
 *     LOGIN_FAILURE_WINDOW_MS, then refused for as long), apiKey.ts;
 *   - failed logins, after the OWASP Authentication Cheat Sheet's account
 *     lockout (a failure counter per account, not only per address) made
 *     safe against locking the owner out with OWASP's device-cookie scheme
 *     (knownSources.ts), the client address standing for the device:
 *       · per (tenant, login name, address) pair: LOGIN_FAILURES_ALLOWED,
 *         for every source: what holds one source's guessing;
 *       · per (tenant, login name): LOGIN_ACCOUNT_FAILURES_ALLOWED, the
 *         account lockout against guesses spread over many addresses;
 *       · per (tenant, address): LOGIN_ADDRESS_FAILURES_ALLOWED, against
 *         trying many names of a tenant from one address; and per address
 *         over all tenants LOGIN_ADDRESS_FAILURES_ALLOWED_ALL_TENANTS, a
 *         higher cap, so one tenant's failures behind a shared NAT do not
 *         shut out the other tenants' users there.
 *     The last three bind only unknown sources: a pair that logged in with
 *     the right password lately (LOGIN_KNOWN_SOURCE_MS) is refused only for
 *     its own failures, so nobody can lock a user out of the places they
 *     log in from, and a right password from an address with no failures
 *     of its own gets in unless the account or the address is under a
 *     guessing attack past those larger limits.
 *     Each limit is 429 before the password is even checked, for the
 *     window (LOGIN_FAILURE_WINDOW_MS). An attempt takes its slot in each
 *     limit before its password is checked (in the same event-loop turn as
 *     the limit check, so parallel guesses cannot all pass the check
 *     first) and gives them back once the password proved right: what
 *     stays counted are the failures. An attempt that finds a key full
 *     while attempts of it are being checked waits (at most
 *     LOGIN_WAIT_MAX_MS) for one of them to end instead of being refused:
 *     right passwords in flight are no failures (attemptsInFlight.ts).
 * A limit of 0 turns its policy (or that login limit) off;
 * LOGIN_FAILURES_ALLOWED=0 turns every login limit off.
 * Every 429 carries `Retry-After` in whole seconds.
 */
import type { Call } from './call.js'
import { rateLimitHeaders, rateLimitUsage, type RateLimitUsage } from './rateLimitHeaders.js'
import { tooManyRequests } from './tooManyRequests.js'
import type { WindowCounter } from './windowCounter.js'

/**
 * Counts an authenticated request of the caller; 429 past the limit of its user in its tenant. Returns the quota left
 * after it, for the answer's headers (rateLimitHeaders.ts; the 429 carries them too); null when the limit is off.
 */
export function meterRequest(call: Call): RateLimitUsage | null {
  const { config, limits } = call.services
  if (call.principal === null || config.rateLimitRequests === 0) return null
  const key = `${call.tenantName ?? ''}\u0000${call.principal.userId}`
  const now = Date.now()
  const wait = limits.requests.hit(key, now)
  const { count, endsAt } = limits.requests.usage(key, now)
  const usage = rateLimitUsage(config.rateLimitRequests, config.rateLimitWindowMs, count, endsAt, now)
  if (wait > 0) {
    const refused = tooManyRequests(wait, `more than ${config.rateLimitRequests} requests in ${config.rateLimitWindowMs} ms`)
    Object.assign(refused.headers, rateLimitHeaders(usage))
    throw refused
  }
  return usage
}

/**
 * The login limits an attempt is held to, each with its key: the pair's
 * always, the account's and the address's unless the pair is a known
 * source. The keys are NUL-separated and start with their limit's letter,
 * so no two limits share a key in loginsInFlight.
 */
function loginLimits(call: Call, name: string, now: number): { pair: string; limited: [WindowCounter, string][] } {
  const { config, limits } = call.services
  const tenant = call.tenantName ?? ''
  const address = call.request.remoteAddress()
  const pair = `p\u0000${tenant}\u0000${name}\u0000${address}`
  const limited: [WindowCounter, string, number][] = [[limits.failedLoginsByPair, pair, config.loginFailuresAllowed]]
  if (!limits.knownSources.has(pair, now)) {
    limited.push(
      [limits.failedLoginsByName, `n\u0000${tenant}\u0000${name}`, config.loginAccountFailuresAllowed],
      [limits.failedLoginsByTenantAddress, `t\u0000${tenant}\u0000${address}`, config.loginAddressFailuresAllowed],
      [limits.failedLoginsByAddress, `a\u0000${address}`, config.loginAddressFailuresAllowedAllTenants],
    )
  }
  return { pair, limited: limited.filter(([, , limit]) => limit > 0).map(([counter, key]) => [counter, key]) }
}

/** A login attempt that holds its slot in each of its login limits until it is settled. */
export interface LoginAttempt {
  /** The password was checked: a right one gives the slot back, a wrong one leaves it counted. Once; later calls do nothing. */
  settle(succeeded: boolean): void
}

const UNLIMITED_ATTEMPT: LoginAttempt = { settle() {} }

/** The longest a login attempt waits for attempts in flight to make room (a few password checks under load). */
const LOGIN_WAIT_MAX_MS = 10_000

/**
 * Counts a login attempt in its login limits (loginLimits) before the
 * password is checked; 429 while any of them is blocked by failures. While
 * a key is full with attempts still being checked, waits for them (see the
 * top). The caller settles the attempt once the password is checked,
 * whatever the outcome; a right password makes its pair a known source.
 */
export async function reserveLoginAttempt(call: Call, name: string): Promise<LoginAttempt> {
  const { config, limits } = call.services
  if (config.loginFailuresAllowed === 0) return UNLIMITED_ATTEMPT
  const { pair, limited } = loginLimits(call, name, Date.now())
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
      if (succeeded) limits.knownSources.remember(pair, now)
      for (const [counter, key] of limited) {
        if (succeeded) counter.release(key, countedAt, now)
        inFlight.end(key)
      }
    },
  }
}
