/*
 * The cluster's own calls on a node's internal listener (under /cluster/,
 * with the node credential: http/internalAccess.ts), in one table. Each is
 * a POST on a path pattern matched as the API's routes are
 * (http/pathPattern.ts); its captured segments are percent-decoded, and a
 * path whose capture would be empty is no call.
 *
 *   POST /cluster/tenants/<tenant>/release        the tenant handed back to an operator (releaseCall.ts)
 *   POST /cluster/tenants/<tenant>/restore        an online restore to a point of its history (restoreCall.ts)
 *   POST /cluster/tenants/<tenant>/writes/<name>  a named write in the tenant (http/tenantWrites.ts)
 *
 * Anything else is answered 404 by the listener (http/server.ts).
 */
import type { Services } from '../http/call.js'
import { compilePattern, matchCompiled, type PathPattern } from '../http/pathPattern.js'
import type { ApiResponse } from '../http/response.js'
import { TENANT_WRITE_CALL, tenantWriteCall } from '../http/tenantWrites.js'
import type { OnlineRestores } from '../tenants/onlineRestore.js'
import type { TenantRegistry } from '../tenants/tenantRegistry.js'
import type { ClusterPlacement } from './clusterPlacement.js'
import { RELEASE_CALL } from './releaseCall.js'
import { RESTORE_CALL, restoreCall } from './restoreCall.js'

/** A cluster call found: it runs on the request's body. */
export type ClusterCall = (body: Buffer) => Promise<ApiResponse>

/** The release call (releaseCall.ts): the tenant put to rest here and left to the operator. */
async function handBack(registry: TenantRegistry, placement: ClusterPlacement, tenant: string): Promise<ApiResponse> {
  placement.handBack(tenant)
  const released = await registry.evict(tenant)
  return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ released }) }
}

/** The captures of a path matching the pattern, decoded; null when it does not match or a capture is empty. */
function callParams(pattern: PathPattern, segments: readonly string[]): Record<string, string> | null {
  const params = matchCompiled(pattern, segments)
  if (params === null) return null
  for (const name in params) {
    if (params[name] === '') return null
    params[name] = decodeURIComponent(params[name] as string)
  }
  return params
}

/** The calls a node answers, with what it answers them with: `(method, path) → the call, or null`. */
export function clusterCalls(services: Services, placement: ClusterPlacement, restores: OnlineRestores): (method: string, path: string) => ClusterCall | null {
  const calls: readonly { pattern: PathPattern; call: (params: Record<string, string>) => ClusterCall }[] = [
    { pattern: compilePattern(RELEASE_CALL), call: (params) => () => handBack(services.registry, placement, params.tenant as string) },
    { pattern: compilePattern(RESTORE_CALL), call: (params) => (body) => restoreCall(restores, params.tenant as string, body) },
    { pattern: compilePattern(TENANT_WRITE_CALL), call: (params) => tenantWriteCall(services, params.tenant as string, params.name as string) },
  ]
  return (method, path) => {
    if (method !== 'POST') return null
    const segments = path.split('/').slice(1)
    for (const { pattern, call } of calls) {
      const params = callParams(pattern, segments)
      if (params !== null) return call(params)
    }
    return null
  }
}
