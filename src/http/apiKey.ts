/*
 * The API key of login, refresh and the public calls (`apikey` query
 * parameter or `X-Api-Key` header), compared in constant time with every
 * configured key. Wrong keys are counted per client address like failed
 * logins (rateLimiter.ts): past API_KEY_FAILURES_ALLOWED in a
 * LOGIN_FAILURE_WINDOW_MS the address is refused with 429 TL01-9010 and
 * `Retry-After` for as long, whatever key it sends, so guessing keys from
 * one address gets that many tries per window. The check and the count
 * happen in one event-loop turn (nothing here awaits), so parallel guesses
 * are held to the limit as well. A right key is not counted, nor a request
 * without any key (it guesses nothing).
 */
import { constantTimeEqual } from '../domain/credentials.js'
import { ApiError } from '../domain/errors.js'
import type { Call } from './call.js'
import { tooManyRequests } from './tooManyRequests.js'

export function requireApiKey(call: Call): void {
  const { config, limits, apiKeys } = call.services
  const limited = config.apiKeyFailuresAllowed > 0
  const address = call.request.remoteAddress()
  const now = Date.now()
  const blockedMs = limited ? limits.failedApiKeysByAddress.waitMs(address, now) : 0
  if (blockedMs > 0) throw tooManyRequests(blockedMs, 'too many wrong API keys')
  const key = call.request.query.get('apikey') ?? call.request.headers.get('x-api-key') ?? ''
  let known = false
  for (const candidate of apiKeys) if (constantTimeEqual(candidate, key)) known = true
  if (known) return
  if (limited && key !== '') limits.failedApiKeysByAddress.hit(address, now)
  throw new ApiError('TL01-1001', 'a valid API key is required (query parameter apikey)')
}
