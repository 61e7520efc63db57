/*
 * Where a request goes: the tenant, named by the host or, on the public
 * address, by the path (tenantAddress.ts), and the path below that address
 * split into decoded segments (request.ts, splitPath). A path that does not
 * split (TL01-9003), or a tenant name that cannot be one, is refused here in
 * the format the request asked for. Then the address either reaches a
 * tenant's /v1 routes, or it is the docs page, or it is refused
 * (reachesApi): a host this server does not serve, an account the path
 * names that cannot exist, a path outside /v1.
 */
import { ApiError } from '../domain/errors.js'
import type { IncomingRequest } from './incomingRequest.js'
import { PathError, splitPath, tenantLabelProblem } from './request.js'
import type { RequestHead } from './response.js'
import { referencePage } from './routes/docsPage.js'
import { tenantAddressOf } from './tenantAddress.js'

/** The request's address, split; it is also the head an error answer is written in (its JSONP suffix read). */
export interface RequestAddress extends RequestHead {
  /** The tenant; null: the public address; undefined: an address this server does not serve. */
  readonly tenant: string | null | undefined
  /** The path before the tenant's own paths: '' (by host, or the public address) or `/tenant/<name>` (by path). */
  readonly prefix: string
  /** The path below the address and its /v1, in decoded segments, a JSONP `.json` suffix taken off the last. */
  readonly segments: string[]
  /** Whether the path is under /v1. */
  readonly versioned: boolean
}

/** An address that reaches the /v1 routes of a tenant (or of the public address: null). */
export type ApiAddress = RequestAddress & { readonly tenant: string | null }

/** The request's address; null: refused (a malformed path, a name that cannot be a tenant's). */
export function addressOf(incoming: IncomingRequest, baseDomain: string): RequestAddress | null {
  const { url, query, headers } = incoming
  const address = tenantAddressOf(headers.get('host') ?? '', url, baseDomain)
  let split: ReturnType<typeof splitPath>
  try {
    split = splitPath(address.path)
  } catch (error) {
    // The path did not split, so whether it ends in the `.json` of JSONP is read from the raw text.
    incoming.refuse({ query, headers, jsonpSuffix: /\.json\/*$/.test(url) }, new ApiError('TL01-9003', error instanceof PathError ? error.message : 'malformed path'))
    return null
  }
  const requestAddress: RequestAddress = {
    query,
    headers,
    jsonpSuffix: split.jsonpSuffix,
    tenant: address.tenant,
    prefix: address.prefix,
    segments: split.segments,
    versioned: split.versioned,
  }
  const labelProblem = tenantLabelProblem(address.tenant)
  if (labelProblem !== null) {
    incoming.refuse(requestAddress, labelProblem)
    return null
  }
  return requestAddress
}

/** The entry page and the interactive reference, outside /v1 (routes/docsPage.ts); true: answered with one. */
export function answersDocsPage(incoming: IncomingRequest, address: RequestAddress): boolean {
  if (address.tenant === undefined || address.versioned) return false
  const page = referencePage(incoming.exchange.method, incoming.url, incoming.headers.get('accept'))
  if (page === null) return false
  incoming.send(page)
  return true
}

/** Whether the address reaches a tenant's /v1 routes; when not, the request is refused (a host not served, a path outside /v1). */
export function reachesApi(incoming: IncomingRequest, address: RequestAddress): address is ApiAddress {
  const { tenant } = address
  if (tenant !== undefined && address.versioned) return true
  const message =
    tenant !== undefined
      ? 'paths start with /v1'
      : address.prefix !== ''
        ? `'${address.prefix.slice(0, 100)}' names no account`
        : `host '${(incoming.headers.get('host') ?? '').slice(0, 100)}' is not served here`
  incoming.refuse(address, new ApiError(tenant === undefined ? 'TL01-1005' : 'TL01-9003', message))
  return false
}
