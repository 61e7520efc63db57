/*
 * The request model every handler sees, whether it came over a socket or as
 * an item of a batch: method (after the `method=` override), the path below
 * /v1 split into decoded segments, the query, lower-cased headers, the body
 * and the tenant the address names (tenantAddress.ts: by host, or by path
 * on the public address). Nothing here refers to uWebSockets.js.
 */
import { ApiError } from '../domain/errors.js'
import { TENANT_NAME_MAX_LENGTH } from '../domain/tenantName.js'

export interface ApiRequest {
  readonly method: string
  /** Path segments after `/v1`, percent-decoded; a `.json` JSONP suffix is removed. */
  readonly segments: readonly string[]
  readonly query: ReadonlyMap<string, string>
  readonly headers: ReadonlyMap<string, string>
  readonly body: Buffer
  /** The tenant named by the address (host or path), or null for the public URL. */
  readonly tenant: string | null
  /**
   * The client's address. A function, because over HTTP it is a system call
   * (getpeername) that only the rate limits of logins and password requests
   * need; the server looks it up on the first call.
   */
  readonly remoteAddress: () => string
  /** The request asked for JSONP with `.json?callback=`. */
  readonly jsonpSuffix: boolean
  /** Set for items of a batch: nested batches are refused. */
  readonly inBatch: boolean
  /** The id of the HTTP request (a batch's items share it): in the X-Request-Id header, the request log and 5xx descriptions. */
  readonly requestId: string
  /**
   * The path before `/v1` that named the tenant ('' by host and on the public address, `/tenant/<name>` by path:
   * tenantAddress.ts); null for a request without an address of its own (a batch item). What the answer links to,
   * and a forward to another node (requestTarget.ts), keeps this form.
   */
  readonly addressPrefix: string | null
  /** The query as received, undecoded ('' for none): the parameters a link to another page repeats as written (paging.ts). */
  readonly rawQuery: string
  /** Forwarded by another node of the cluster (the internal listener): answered here, never forwarded again. */
  readonly forwarded: boolean
}

export class PathError extends Error {}

/** Splits `/v1/a/b%2Fc` into ['a', 'b/c']; throws PathError for malformed paths. */
export function splitPath(rawPath: string): { segments: string[]; jsonpSuffix: boolean; versioned: boolean } {
  const parts = rawPath.split('/')
  // The path's leading slash (or two) makes empty parts before its first segment.
  let next = parts[0] === '' ? 1 : 0
  if (parts[next] === '') next += 1
  const versioned = parts[next] === 'v1'
  if (versioned) next += 1
  const segments: string[] = []
  for (; next < parts.length; next += 1) {
    const part = parts[next] as string
    if (part.length > 1024) throw new PathError('path segment longer than 1024 characters')
    // Most segments have nothing to decode; decodeURIComponent costs about a microsecond a path even then.
    segments.push(part.includes('%') ? decodeSegment(part) : part)
  }
  while (segments.length > 0 && segments[segments.length - 1] === '') segments.pop()
  let jsonpSuffix = false
  const last = segments[segments.length - 1]
  if (last?.endsWith('.json')) {
    segments[segments.length - 1] = last.slice(0, -'.json'.length)
    jsonpSuffix = true
  }
  if (segments.includes('..') || segments.includes('.')) throw new PathError('path may not contain . or .. segments')
  return { segments, jsonpSuffix, versioned }
}

function decodeSegment(part: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    throw new PathError(`path segment '${part.slice(0, 64)}' is not valid percent-encoding`)
  }
}

/**
 * The query's parameters, the first of each name kept, read exactly as URLSearchParams reads them
 * (application/x-www-form-urlencoded: `+` is a space, `%` escapes UTF-8). Most parameters (a token, `$top=100`) have
 * nothing to decode and are taken as they are; one with `+` or escapes of ASCII characters (a `$filter`:
 * `project%2Fid+eq+%27…%27`) is decoded here; any other part (an escape of a byte of UTF-8, a bad escape), and a query
 * holding a lone surrogate (which URLSearchParams replaces), is read by URLSearchParams itself. The whole query
 * through URLSearchParams cost 3.7–4.1 µs a page (bench/RESULTS.md); this about half.
 */
export function parseQuery(queryString: string): Map<string, string> {
  const query = new Map<string, string>()
  if (queryString === '') return query
  if (LONE_SURROGATE.test(queryString)) {
    for (const [name, value] of new URLSearchParams(queryString)) if (!query.has(name)) query.set(name, value)
    return query
  }
  const length = queryString.length
  // The next `%` and `+` at or after the part's start (indexOf, not a loop over every character: it is native).
  let percent = -1
  let plus = -1
  for (let start = 0; start <= length; ) {
    let end = queryString.indexOf('&', start)
    if (end < 0) end = length
    if (end > start) {
      let equals = queryString.indexOf('=', start)
      if (equals >= end) equals = -1
      if (percent < start && percent !== length) percent = indexOrLength(queryString, '%', start)
      if (plus < start && plus !== length) plus = indexOrLength(queryString, '+', start)
      addQueryPart(query, queryString, start, equals, end, percent >= end && plus >= end)
    }
    start = end + 1
  }
  return query
}

function indexOrLength(text: string, search: string, from: number): number {
  const at = text.indexOf(search, from)
  return at < 0 ? text.length : at
}

const PERCENT = 0x25
const PLUS = 0x2b
/** A UTF-16 surrogate without its pair (a batch item's path comes from JSON, which can hold one). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Adds the part from `start` to `end` (its first `=` at `equals`, or -1) unless its name came before. */
function addQueryPart(query: Map<string, string>, text: string, start: number, equals: number, end: number, plain: boolean): void {
  const nameEnd = equals < 0 ? end : equals
  let name = plain ? text.slice(start, nameEnd) : asciiDecoded(text, start, nameEnd)
  let value = equals < 0 ? '' : plain ? text.slice(equals + 1, end) : asciiDecoded(text, equals + 1, end)
  if (name === null || value === null) [name, value] = decodedByUrlSearchParams(text.slice(start, end))
  if (!query.has(name)) query.set(name, value)
}

/**
 * The text from `from` to `to` with `+` as a space and escapes of ASCII characters decoded; null when it holds an
 * escape of a byte above 0x7f (UTF-8 to put together) or a bad escape: URLSearchParams reads those.
 */
function asciiDecoded(text: string, from: number, to: number): string | null {
  let out = ''
  let copied = from
  for (let at = from; at < to; at += 1) {
    const code = text.charCodeAt(at)
    if (code === PLUS) {
      out += `${text.slice(copied, at)} `
      copied = at + 1
    } else if (code === PERCENT) {
      const high = at + 2 < to ? hexDigit(text.charCodeAt(at + 1)) : -1
      const low = high < 0 ? -1 : hexDigit(text.charCodeAt(at + 2))
      if (low < 0 || high > 7) return null
      out += text.slice(copied, at) + String.fromCharCode(high * 16 + low)
      at += 2
      copied = at + 1
    }
  }
  return out + text.slice(copied, to)
}

function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30
  if (code >= 0x41 && code <= 0x46) return code - 0x37
  if (code >= 0x61 && code <= 0x66) return code - 0x57
  return -1
}

/** The name of one raw `name=value` part of a query (no `&` in it), read as parseQuery reads it (`%24skip` is `$skip`). */
export function queryPartName(part: string): string {
  let equals = part.indexOf('=')
  if (equals < 0) equals = part.length
  if (!part.includes('%') && !part.includes('+') && !LONE_SURROGATE.test(part)) return part.slice(0, equals)
  return (LONE_SURROGATE.test(part) ? null : asciiDecoded(part, 0, equals)) ?? decodedByUrlSearchParams(part)[0]
}

/** One `name=value` part (no `&` in it) as URLSearchParams reads it. */
function decodedByUrlSearchParams(part: string): [string, string] {
  for (const pair of new URLSearchParams(part)) return pair
  return ['', '']
}

/** The host without its port (`:` and digits at the end) and without one trailing dot (read per request: no regular expression). */
function hostName(host: string): string {
  let end = host.length
  let digits = end
  while (digits > 0 && isDigit(host.charCodeAt(digits - 1))) digits -= 1
  if (digits < end && digits > 0 && host.charCodeAt(digits - 1) === COLON) end = digits - 1
  if (end > 0 && host.charCodeAt(end - 1) === DOT) end -= 1
  return end === host.length ? host : host.slice(0, end)
}

const COLON = 0x3a
const DOT = 0x2e

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39
}

/** The tenant named by the host: `acme.localhost:8080` → `acme`; the bare domain → null. */
export function tenantFromHost(host: string, baseDomain: string): string | null | undefined {
  const name = hostName(host).toLowerCase()
  if (name === baseDomain || name === '' || name === '127.0.0.1' || name === '[::1]') return null
  if (name.endsWith(`.${baseDomain}`)) {
    const tenant = name.slice(0, -(baseDomain.length + 1))
    return tenant.includes('.') ? undefined : tenant
  }
  return undefined
}

/**
 * The 400 for a host whose tenant label is longer than a tenant's name can be (one DNS label, TENANT_NAME_MAX_LENGTH):
 * it names no tenant, and is never looked up in the tenant directory (its keys have a size limit); null otherwise.
 */
export function tenantLabelProblem(tenant: string | null | undefined): ApiError | null {
  if (typeof tenant !== 'string' || tenant.length <= TENANT_NAME_MAX_LENGTH) return null
  return new ApiError('TL01-1105', `the host's tenant label has ${tenant.length} characters; a tenant's name has at most ${TENANT_NAME_MAX_LENGTH}`)
}

export function queryFlag(request: ApiRequest, name: string): boolean {
  return request.query.get(name) === 'true'
}
