/*
 * Rules of RFC 9112 on a request's head that our listeners enforce beyond
 * what their HTTP parser does, the same on the public and the admin
 * listener: a request names its host once (§3.2: a server MUST answer 400
 * to more than one Host header: two hosts mean two readings of which
 * tenant is meant, the classic start of a cache-poisoning or routing
 * attack), its body has one framing only (§6.3), and its target is a path
 * (origin form, §3.2.1), not a whole URL.
 *
 * One framing: a request smuggled past a proxy is a body that the proxy
 * and the server measure differently. So a request is refused with 400,
 * and its connection closed, when its framing can be read two ways: a
 * Content-Length sent more than once (uWebSockets.js reads the first, a
 * proxy may read the last: `Content-Length: 0` then `Content-Length: 40`
 * with a request in those 40 bytes was two requests here), a
 * Content-Length that is not digits only, a Transfer-Encoding sent more
 * than once or other than exactly `chunked` (uWS reads any value as
 * chunked, `chunked, identity` and `gzip, chunked` included), or both
 * headers at once. uWS shows every field it read (repeats too), so these
 * are checked here before anything reads the body. What uWS decides
 * alone — the chunk lines inside a chunked body, which the service never
 * sees — is described in the README (Security, "Request framing").
 *
 * The absolute form (`GET http://acme.localhost/v1/… HTTP/1.1`) is only
 * sent to proxies; §3.2.2 says a server must accept it and take its
 * authority as the host. We answer 400 instead, as the issue asks: no
 * client of this API sends it, and a server that honours it would have two
 * places naming the tenant (the URL and the Host header) to keep in step.
 * The public listener never sees one (its parser, uWebSockets.js, takes
 * only origin-form targets); the admin listener checks it here.
 */
import { ApiError } from '../domain/errors.js'
import type { OnceFieldCounts } from './requestHeaders.js'

/** A Content-Length as RFC 9110 §8.6 writes it: one or more digits. */
const CONTENT_LENGTH = /^[0-9]+$/

/** The one transfer coding a request body may carry here (RFC 9112 §7: coding names are case-insensitive). */
const CHUNKED = 'chunked'

/** Why the body's framing could be read more than one way; null when it cannot. */
function framingProblem(counts: OnceFieldCounts, headers: ReadonlyMap<string, string>): string | null {
  if (counts.contentLength > 1) return `Content-Length is sent ${counts.contentLength} times`
  if (counts.transferEncoding > 1) return `Transfer-Encoding is sent ${counts.transferEncoding} times`
  if (counts.contentLength === 1 && counts.transferEncoding === 1) return 'both Content-Length and Transfer-Encoding are sent'
  const length = headers.get('content-length')
  if (length !== undefined && !CONTENT_LENGTH.test(length)) return `Content-Length '${length.slice(0, 40)}' is not a number of bytes`
  const coding = headers.get('transfer-encoding')
  if (coding !== undefined && coding.trim().toLowerCase() !== CHUNKED) return `Transfer-Encoding '${coding.slice(0, 40)}' is not exactly 'chunked'`
  return null
}

/** The 400 for a head that breaks one of the rules above, or null when it keeps them all. */
export function headProblem(counts: OnceFieldCounts, headers: ReadonlyMap<string, string>, target: string): ApiError | null {
  if (counts.host > 1) return new ApiError('TL01-1105', `the request has ${counts.host} Host headers; HTTP allows exactly one (RFC 9112 §3.2)`)
  const framing = framingProblem(counts, headers)
  if (framing !== null) return new ApiError('TL01-1105', `the request's body framing is ambiguous: ${framing} (RFC 9112 §6.3)`)
  if (!target.startsWith('/')) return new ApiError('TL01-1105', 'the request target must be a path starting with / (origin form, RFC 9112 §3.2.1), not a whole URL')
  return null
}
