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
  if (last !== undefined && last.endsWith('.json')) {
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

export function parseQuery(queryString: string): Map<string, string> {
  const query = new Map<string, string>()
  if (queryString === '') return query
  for (const [key, value] of new URLSearchParams(queryString)) if (!query.has(key)) query.set(key, value)
  return query
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
