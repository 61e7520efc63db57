/*
 * The one answer of every limit on how much a client may ask at once: 429
 * TL01-9010 with `Retry-After` in whole seconds (at least 1), the message
 * saying which limit and when to retry. The request limits and login
 * limits (rateLimiter.ts), the API-key attempts (apiKey.ts) and the change
 * feed's subscription limits (changes/subscriptionLimits.ts) build it here,
 * so a client reads one shape whatever it hit.
 */
import { ApiError } from '../domain/errors.js'

export function tooManyRequests(waitMs: number, message: string): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000))
  return new ApiError('TL01-9010', `${message}; retry in ${seconds} s`, null, [], { 'Retry-After': String(seconds) })
}
