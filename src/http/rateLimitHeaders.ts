/*
 * The caller's request quota on every authenticated answer, in the header
 * fields of the IETF draft "RateLimit header fields for HTTP"
 * (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Limit` (requests per
 * window), `RateLimit-Remaining` (left in the current window),
 * `RateLimit-Reset` (seconds until the window ends and the quota is whole
 * again) and `RateLimit-Policy` (`<limit>;w=<window in seconds>`). They are
 * read once per request, right after it was counted, from the counter the
 * requests policy keeps (rateLimiter.ts: meterRequest), and put on the
 * answer whatever it is: a success, an error after authentication, the 429
 * of the limit itself (which also says `Retry-After`). With the limit off
 * (RATE_LIMIT_REQUESTS=0) there is no quota to tell, and no headers.
 */
import { ApiError } from '../domain/errors.js'
import type { MaybePromise } from '../maybePromise.js'
import type { ApiResponse } from './response.js'

export interface RateLimitUsage {
  readonly limit: number
  readonly remaining: number
  /** Whole seconds until the window ends (rounded up). */
  readonly resetSeconds: number
  readonly windowMs: number
}

/** The usage of a window holding `count` requests and ending at `endsAt` (epoch ms), seen at `now`. */
export function rateLimitUsage(limit: number, windowMs: number, count: number, endsAt: number, now: number): RateLimitUsage {
  return { limit, remaining: Math.max(0, limit - count), resetSeconds: Math.max(0, Math.ceil((endsAt - now) / 1000)), windowMs }
}

export function rateLimitHeaders(usage: RateLimitUsage): Record<string, string> {
  return {
    'RateLimit-Limit': String(usage.limit),
    'RateLimit-Remaining': String(usage.remaining),
    'RateLimit-Reset': String(usage.resetSeconds),
    'RateLimit-Policy': `${usage.limit};w=${Math.max(1, Math.round(usage.windowMs / 1000))}`,
  }
}

function withHeaders(response: ApiResponse, headers: Record<string, string>): ApiResponse {
  return Object.assign({}, response, { headers: Object.assign({}, response.headers, headers) })
}

/**
 * An ApiError that goes on to the router's error answer carrying the headers. Anything else goes on as it is: the
 * tenant layer's refusals (a tenant held by another node must stay one, to be forwarded) and bugs.
 */
function errorWithHeaders(thrown: unknown, headers: Record<string, string>): unknown {
  if (!(thrown instanceof ApiError)) return thrown
  return new ApiError(thrown.code, thrown.message, thrown.description, thrown.constraintViolations, Object.assign({}, headers, thrown.headers))
}

/** The answer of `answer()`, or the error it fails with, carrying the quota headers of `usage` (none when null). */
export function withRateLimitHeaders(usage: RateLimitUsage | null, answer: () => MaybePromise<ApiResponse>): MaybePromise<ApiResponse> {
  if (usage === null) return answer()
  const headers = rateLimitHeaders(usage)
  let pending: MaybePromise<ApiResponse>
  try {
    pending = answer()
  } catch (thrown) {
    throw errorWithHeaders(thrown, headers)
  }
  if (!(pending instanceof Promise)) return withHeaders(pending, headers)
  return pending.then(
    (response) => withHeaders(response, headers),
    (thrown: unknown) => {
      throw errorWithHeaders(thrown, headers)
    },
  )
}
