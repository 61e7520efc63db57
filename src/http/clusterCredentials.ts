/*
 * The two credentials of a cluster's internal listener (cluster mode,
 * forwarding.ts), both derived from CLUSTER_SECRET, neither being it:
 *
 *   forwarded  HMAC-SHA256(CLUSTER_SECRET, FORWARDED_LABEL), in the header
 *              X-TimeLedger-Forwarded: carried by a client's request that a
 *              node forwards to the node holding its tenant. It opens that
 *              tenant's own /v1 routes and nothing else: the forwarder also
 *              names the tenant (X-TimeLedger-Tenant), and the internal
 *              listener refuses a request whose address names another
 *              tenant, the public address or a path outside /v1.
 *   node       HMAC-SHA256(CLUSTER_SECRET, NODE_LABEL), in the header
 *              X-TimeLedger-Node: carried by the cluster's own calls
 *              (/cluster/*: a tenant's named writes, release, restore),
 *              made by nodes and the operator's CLI. It opens /cluster/*
 *              and nothing else.
 *
 * Why two: a forwarded request carries a client's path, method and body.
 * Were its credential the one that opens /cluster/*, any flaw in how a
 * forwarded path is built (as once `\` and `..` resolved by the URL
 * parser) would let a client call the nodes' own endpoints. With the
 * credentials apart, a forwarded request cannot open them whatever its
 * path. The labels are distinct constants, so neither credential can be
 * computed from the other without the secret (HMAC is a PRF). Both are
 * compared in constant time.
 */
import crypto from 'node:crypto'

/** The header of a forwarded client request's credential. */
export const FORWARDED_CREDENTIAL_HEADER = 'x-timeledger-forwarded'
/** The header naming the tenant a forwarded request was accepted for. */
export const FORWARDED_TENANT_HEADER = 'x-timeledger-tenant'
/** The header of a node-to-node (or operator) call's credential. */
export const NODE_CREDENTIAL_HEADER = 'x-timeledger-node'

const FORWARDED_LABEL = 'timeledger/forwarded-client-request/v1'
const NODE_LABEL = 'timeledger/node-call/v1'

export interface ClusterCredentials {
  /** Opens a tenant's /v1 routes for a request forwarded on a client's behalf. */
  readonly forwarded: string
  /** Opens the cluster's own calls, /cluster/*. */
  readonly node: string
}

function derived(secret: string, label: string): string {
  return crypto.createHmac('sha256', secret).update(label).digest('base64url')
}

export function clusterCredentials(secret: string): ClusterCredentials {
  return { forwarded: derived(secret, FORWARDED_LABEL), node: derived(secret, NODE_LABEL) }
}

/** Whether the header `name` holds exactly `credential` (compared in constant time). */
export function carriesCredential(headers: ReadonlyMap<string, string>, name: string, credential: string): boolean {
  const given = Buffer.from(headers.get(name) ?? '')
  const expected = Buffer.from(credential)
  return given.length === expected.length && crypto.timingSafeEqual(given, expected)
}

/** The headers of a node-to-node call (releaseCall.ts, restoreCall.ts, tenantWrites.ts). */
export function nodeCallHeaders(secret: string): Record<string, string> {
  return { [NODE_CREDENTIAL_HEADER]: clusterCredentials(secret).node }
}
