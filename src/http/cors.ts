/*
 * Cross-origin requests (CORS, the Fetch standard) for browser apps served
 * from another origin. Off unless CORS_ORIGINS lists the origins allowed
 * (`https://app.example.com,http://localhost:5173`, or `*` for any; read by
 * config.ts).
 *
 * A browser asks first with a preflight: `OPTIONS` with `Origin` and
 * `Access-Control-Request-Method`, carrying no token. It is answered here,
 * before routing and authentication: 204 with Access-Control-Allow-Origin,
 * -Methods, -Headers (the headers the browser asked for, when they are
 * plain header names) and -Max-Age. An origin not in the list gets 403
 * TL01-1008 saying so; with CORS off every preflight gets 403 saying that
 * CORS_ORIGINS is not set. An OPTIONS that is no preflight gets 405
 * TL01-9004: the API has no other use for it.
 *
 * The actual request's answer, whatever its status, carries
 * Access-Control-Allow-Origin for an allowed origin and
 * Access-Control-Expose-Headers naming the headers a client reads (request
 * id, ETag, paging, rate limits, download names). With a list of origins the
 * answer depends on Origin, so it says `Vary: Origin`; with `*` it does not.
 * No credentials mode: tokens travel in a header or the query, never in
 * cookies, so Access-Control-Allow-Credentials is never sent.
 */
import type { CorsOrigins } from '../config.js'
import { accessDenied, ApiError } from '../domain/errors.js'
import { withVary } from './varyHeader.js'

/** How long a browser may reuse a preflight's answer (Chromium caps it at 7200 s). */
const PREFLIGHT_MAX_AGE_SECONDS = 600

/** The methods the API answers. */
const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'

/** What a preflight allows when the browser names no headers: those a client of this API sends. */
const DEFAULT_ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, If-Match, If-None-Match, Idempotency-Key, X-Api-Key, X-Request-Id'

/** The answer's headers a browser script may read. */
const EXPOSED_HEADERS = [
  'X-Request-Id',
  'ETag',
  'X-Total-Count',
  'Link',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'Retry-After',
  'Content-Disposition',
  'Idempotent-Replayed',
].join(', ')

/** A comma-separated list of header names, as Access-Control-Request-Headers has (RFC 9110 token characters). */
const HEADER_NAME_LIST = /^\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*\s*$/

function allows(origins: CorsOrigins, origin: string): boolean {
  return origins === '*' || origins.has(origin.toLowerCase())
}

function allowOriginHeaders(origins: CorsOrigins, origin: string): Record<string, string> {
  return origins === '*' ? { 'Access-Control-Allow-Origin': '*' } : { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' }
}

/** A request's headers as the front end keeps them (lower-case names). */
type RequestHeaders = ReadonlyMap<string, string>

/** Whether an OPTIONS request is a CORS preflight. */
function isPreflight(method: string, headers: RequestHeaders): boolean {
  return method === 'OPTIONS' && headers.has('origin') && headers.has('access-control-request-method')
}

/** The headers of a preflight's 204, or the error to answer it with (CORS off, origin not allowed, not a preflight). */
export function answerOptions(origins: CorsOrigins | null, headers: RequestHeaders): Record<string, string> | ApiError {
  if (!isPreflight('OPTIONS', headers)) {
    return new ApiError('TL01-9004', 'OPTIONS is answered to CORS preflight requests only (with Origin and Access-Control-Request-Method)', null, [], { Allow: 'GET, HEAD, POST, PUT, PATCH, DELETE' })
  }
  const origin = headers.get('origin') ?? ''
  if (origins === null) return accessDenied('cross-origin requests are off on this server (its CORS_ORIGINS is not set)')
  if (!allows(origins, origin)) return accessDenied(`origin '${origin.slice(0, 200)}' is not allowed to call this API (CORS_ORIGINS)`)
  const requested = headers.get('access-control-request-headers') ?? ''
  return {
    ...allowOriginHeaders(origins, origin),
    'Access-Control-Allow-Methods': ALLOWED_METHODS,
    'Access-Control-Allow-Headers': requested !== '' && HEADER_NAME_LIST.test(requested) ? requested.trim() : DEFAULT_ALLOWED_HEADERS,
    'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
  }
}

/** An answer's headers with those CORS adds for the request's Origin (none when CORS is off). */
export function withCorsHeaders(origins: CorsOrigins | null, origin: string | undefined, headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  if (origins === null) return headers
  if (origin === undefined || !allows(origins, origin)) return origins === '*' ? headers : withVary(headers, 'Origin')
  const added = { ...headers, 'Access-Control-Allow-Origin': origins === '*' ? '*' : origin, 'Access-Control-Expose-Headers': EXPOSED_HEADERS }
  return origins === '*' ? added : withVary(added, 'Origin')
}
