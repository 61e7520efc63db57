/*
 * The abuse counters of this server, one WindowCounter (windowCounter.ts)
 * per policy, with the login attempts in flight and the known sources;
 * rateLimiter.ts applies the policies. They live in memory per process.
 */
import type { Config } from '../config.js'
import { AttemptsInFlight } from './attemptsInFlight.js'
import { KnownSources } from './knownSources.js'
import { MAX_TRACKED_KEYS, WindowCounter } from './windowCounter.js'

export interface AbuseLimits {
  readonly requests: WindowCounter
  readonly failedApiKeysByAddress: WindowCounter
  /** Failed logins per (tenant, name, address); per (tenant, name); per (tenant, address); per address. */
  readonly failedLoginsByPair: WindowCounter
  readonly failedLoginsByName: WindowCounter
  readonly failedLoginsByTenantAddress: WindowCounter
  readonly failedLoginsByAddress: WindowCounter
  /** The pairs that logged in lately: bound by their own failures only. */
  readonly knownSources: KnownSources
  /** Login attempts being checked, per key of any login limit (each limit's keys start with its own letter). */
  readonly loginsInFlight: AttemptsInFlight
}

export function abuseLimits(config: Config): AbuseLimits {
  const failures = (limit: number) => new WindowCounter(limit, config.loginFailureWindowMs, config.loginFailureWindowMs)
  return {
    requests: new WindowCounter(config.rateLimitRequests, config.rateLimitWindowMs),
    failedApiKeysByAddress: failures(config.apiKeyFailuresAllowed),
    failedLoginsByPair: failures(config.loginFailuresAllowed),
    failedLoginsByName: failures(config.loginAccountFailuresAllowed),
    failedLoginsByTenantAddress: failures(config.loginAddressFailuresAllowed),
    failedLoginsByAddress: failures(config.loginAddressFailuresAllowedAllTenants),
    knownSources: new KnownSources(config.loginKnownSourceMs, MAX_TRACKED_KEYS),
    loginsInFlight: new AttemptsInFlight(),
  }
}
