/*
 * When a failed delivery is tried again: exponential backoff from
 * WEBHOOK_RETRY_BASE_MS (1 s, 2 s, 4 s, …), capped at
 * WEBHOOK_RETRY_MAX_DELAY_MS (1 h), each wait drawn from 80–120 % of that
 * (jitter, so receivers that failed together are not hit together again),
 * and never past the retry limit: the last attempt is made when the limit
 * (WEBHOOK_RETRY_LIMIT_MS after the first failure) is reached.
 */

export interface RetryPolicy {
  readonly baseMs: number
  readonly maxDelayMs: number
  readonly limitMs: number
}

/** The wait after the `attempts`-th failed attempt (1, 2, …), before jitter. */
export function backoffMs(attempts: number, policy: RetryPolicy): number {
  return Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(attempts - 1, 40))
}

/**
 * When to try next after `attempts` failed attempts, the first at `firstFailedAt`, the last at `nowMs`; null when
 * the limit is reached (the event is given up).
 */
export function nextAttemptAt(attempts: number, firstFailedAt: number, nowMs: number, policy: RetryPolicy, random: () => number = Math.random): number | null {
  const deadline = firstFailedAt + policy.limitMs
  if (nowMs >= deadline) return null
  const wait = Math.round(backoffMs(attempts, policy) * (0.8 + 0.4 * random()))
  return Math.min(nowMs + Math.max(1, wait), deadline)
}
