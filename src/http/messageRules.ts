/*
 * Rules of RFC 9112 on a request's head that our listeners enforce beyond
 * what their HTTP parser does, the same on the public and the admin
 * listener: a request names its host once (§3.2: a server MUST answer 400
 * to more than one Host header: two hosts mean two readings of which
 * tenant is meant, the classic start of a cache-poisoning or routing
 * attack), and its target is a path (origin form, §3.2.1), not a whole URL.
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

/** The 400 for a head that breaks one of the rules above, or null when it keeps them all. */
export function headProblem(hostHeaders: number, target: string): ApiError | null {
  if (hostHeaders > 1) return new ApiError('TL01-1105', `the request has ${hostHeaders} Host headers; HTTP allows exactly one (RFC 9112 §3.2)`)
  if (!target.startsWith('/')) return new ApiError('TL01-1105', 'the request target must be a path starting with / (origin form, RFC 9112 §3.2.1), not a whole URL')
  return null
}
