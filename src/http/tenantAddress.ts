/*
 * Which tenant a request is for, and its path below that address. A tenant
 * has two addresses that serve exactly the same:
 *
 *   by host  http://acme.localhost:8080/v1/…          the host names it (request.ts, tenantFromHost)
 *   by path  http://localhost:8080/tenant/acme/v1/…   the public address, the tenant in the path
 *
 * The path form is for clients that cannot reach `*.localhost` or cannot
 * send a Host header of their own (Node's fetch, Python's urllib), and for
 * /docs on the public address. It is read on the public address only (a
 * tenant's own host never takes another tenant's path). Its name is case
 * folded like a host name, and kept as the request's address prefix
 * (`/tenant/acme`), so that what the answer links to (a `Link` header, a
 * forwarded request, cluster/httpForwarder.ts) is in the form the client
 * used. A name that cannot be a tenant's (not one DNS label of at most
 * TENANT_NAME_MAX_LENGTH characters, or badly escaped) names no tenant.
 */
import { TENANT_NAME_MAX_LENGTH } from '../domain/tenantName.js'
import { tenantFromHost } from './request.js'

/** Where the path form starts. */
export const TENANT_PATH_PREFIX = '/tenant/'

export interface TenantAddress {
  /** The tenant; null: the public address; undefined: an address this server does not serve. */
  readonly tenant: string | null | undefined
  /** The path before the tenant's own paths: '' (by host, or the public address) or `/tenant/<name>` (by path). */
  readonly prefix: string
  /** The path below the address (`/v1/…`), as received. */
  readonly path: string
}

/** The tenant and path of a request for `url` (the path, without the query) with this Host header. */
export function tenantAddressOf(host: string, url: string, baseDomain: string): TenantAddress {
  const byHost = tenantFromHost(host, baseDomain)
  if (byHost !== null || !url.startsWith(TENANT_PATH_PREFIX)) return { tenant: byHost, prefix: '', path: url }
  const end = url.indexOf('/', TENANT_PATH_PREFIX.length)
  const raw = end < 0 ? url.slice(TENANT_PATH_PREFIX.length) : url.slice(TENANT_PATH_PREFIX.length, end)
  const path = end < 0 ? '' : url.slice(end)
  const name = tenantOfSegment(raw)
  if (name === undefined) return { tenant: undefined, prefix: `${TENANT_PATH_PREFIX}${raw}`, path }
  return { tenant: name, prefix: `${TENANT_PATH_PREFIX}${name}`, path }
}

/** The tenant a path segment names, case folded; undefined when it cannot name one. */
function tenantOfSegment(raw: string): string | undefined {
  let name: string
  try {
    name = decodeURIComponent(raw).toLowerCase()
  } catch {
    return undefined
  }
  if (name === '' || name.length > TENANT_NAME_MAX_LENGTH || !/^[a-z0-9-]+$/.test(name)) return undefined
  return name
}
