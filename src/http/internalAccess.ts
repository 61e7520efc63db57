/*
 * What a request on a cluster node's internal listener may reach
 * (clusterCredentials.ts says why there are two credentials):
 *
 *   /cluster/*     the cluster's own calls, with the node credential only;
 *   anything else  a client's request forwarded by another node, with the
 *                  forwarding credential and the tenant it was accepted for;
 *                  once its address is read (cluster/internalListener.ts), it must name that
 *                  tenant and a /v1 path (reachesForwardedTenant), else it is
 *                  refused like a request without the credential.
 *
 * Each credential opens its own part only: the node credential on a /v1
 * path, or the forwarding credential on /cluster/*, is refused (403).
 */
import { carriesCredential, FORWARDED_CREDENTIAL_HEADER, FORWARDED_TENANT_HEADER, NODE_CREDENTIAL_HEADER, type ClusterCredentials } from './clusterCredentials.js'

/** Where the cluster's own calls live on the internal listener. */
const CLUSTER_CALL_PREFIX = '/cluster/'

export type InternalAccess = { readonly kind: 'node' } | { readonly kind: 'forwarded'; readonly tenant: string } | { readonly kind: 'refused'; readonly reason: string }

const NODE: InternalAccess = { kind: 'node' }

/** What the request at `url` may reach, by the credential it carries. */
export function internalAccess(url: string, headers: ReadonlyMap<string, string>, credentials: ClusterCredentials): InternalAccess {
  if (url.startsWith(CLUSTER_CALL_PREFIX)) {
    if (carriesCredential(headers, NODE_CREDENTIAL_HEADER, credentials.node)) return NODE
    return { kind: 'refused', reason: 'the calls under /cluster/ are taken from the nodes of the cluster only' }
  }
  if (!carriesCredential(headers, FORWARDED_CREDENTIAL_HEADER, credentials.forwarded)) {
    return { kind: 'refused', reason: 'this listener takes requests forwarded by the nodes of the cluster only' }
  }
  const tenant = headers.get(FORWARDED_TENANT_HEADER) ?? ''
  if (tenant === '') return { kind: 'refused', reason: 'a forwarded request names its tenant' }
  return { kind: 'forwarded', tenant }
}

/** Whether a forwarded request's own address (tenant, and whether its path is under /v1) is the tenant it was forwarded for. */
export function reachesForwardedTenant(access: InternalAccess, tenant: string | null | undefined, versioned: boolean): boolean {
  return access.kind === 'forwarded' && versioned && tenant === access.tenant
}
