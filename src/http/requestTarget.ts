/*
 * A request's target as this server understood it, written out again:
 * the address prefix that named the tenant (tenantAddress.ts), `/v1`, and
 * the segments the router matched, each percent-encoded on its own, so that
 * no character of a segment (`/`, `\`, `?`, `#`, `%`) can read as anything
 * but part of that segment, and no `.` or `..` segment exists (splitPath
 * refused them). Nothing of the path as the client wrote it survives.
 *
 * A forward to another node (cluster/httpForwarder.ts) sends this path with
 * the query (forwardTarget): the node holding the tenant routes
 * exactly the request this node accepted, to that tenant's /v1 routes and
 * nowhere else, whatever the client's path was (a raw target with `\..\`
 * resolved by a URL parser once reached the nodes' own endpoints).
 * A link to another page (paging.ts) starts with the same path.
 */
import type { ApiRequest } from './request.js'

/** Characters of a path segment that encodeURIComponent escapes but RFC 3986 allows as they are (pchar: sub-delims, ':', '@'). */
const ALLOWED_IN_SEGMENT = /%(24|26|2B|2C|3B|3D|3A|40)/g

/** A segment that encodes as itself: unreserved characters and the pchar ones ALLOWED_IN_SEGMENT restores (an id, a name). */
const ENCODED_AS_IS = /^[A-Za-z0-9\-_.!~*'()$&+,;=:@]*$/

/** A path segment percent-encoded: it stays one segment, whatever it holds. */
export function encodePathSegment(segment: string): string {
  if (ENCODED_AS_IS.test(segment)) return segment
  return encodeURIComponent(segment).replace(ALLOWED_IN_SEGMENT, (encoded) => decodeURIComponent(encoded))
}

type Addressed = Pick<ApiRequest, 'addressPrefix' | 'segments' | 'jsonpSuffix'>

/** The request's path as understood: address prefix, `/v1`, the segments encoded one by one, the JSONP `.json` suffix. */
export function normalizedPath(request: Addressed): string {
  let path = `${request.addressPrefix ?? ''}/v1`
  for (const segment of request.segments) path += `/${encodePathSegment(segment)}`
  return request.jsonpSuffix ? `${path}.json` : path
}

/** A query that can go on a request line as it came: printable ASCII only (what uWS handed over may hold more). */
const SENDABLE_QUERY = /^[\x21-\x7e]*$/

/**
 * What a forward to another node sends: the normalized path, and the query as received when it can go on a request
 * line as it is (so the answering node sees the parameters as the client wrote them, as its links repeat them), else
 * as this server parsed it. The query cannot reach the path: the path holds no `?` (an encoded one is `%3F`).
 */
export function forwardTarget(request: Addressed & Pick<ApiRequest, 'query' | 'rawQuery'>): string {
  const path = normalizedPath(request)
  const query = SENDABLE_QUERY.test(request.rawQuery) ? request.rawQuery : new URLSearchParams([...request.query]).toString()
  return query === '' ? path : `${path}?${query}`
}
