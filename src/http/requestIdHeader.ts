/*
 * An incoming `X-Request-Id` is kept as the request's id when it is a sane
 * token — 1 to 128 characters of letters, digits and `. _ : -` — so a
 * client, a proxy or a load balancer that names its requests finds the same
 * name in our answer's `X-Request-Id`, in the request log and in the
 * description of a 5xx. Anything else (empty, too long, spaces, quotes,
 * control characters: text that would need escaping in a log line or a
 * header) is ignored and the request gets a fresh id
 * (observability/requestId.ts). Ids are not checked for uniqueness: they are
 * the client's to choose.
 */

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The id the client sent, when it is a sane token; null: give the request a fresh one. */
export function keptRequestId(header: string): string | null {
  return SANE_REQUEST_ID.test(header) ? header : null
}
