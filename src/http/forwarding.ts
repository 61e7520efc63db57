/*
 * Forwarding (cluster mode, ARCHITECTURE.md §8): a request for a tenant whose lease
 * another node holds is sent to that node's internal listener, as this node
 * understood it (requestTarget.ts) and with the credential that opens that
 * tenant's /v1 routes only (clusterCredentials.ts), and its answer given
 * back as it came. The router asks the forwarder when the
 * registry refuses with TenantElsewhere; a forwarded request is answered
 * where it lands and never forwarded again (no loops while a tenant moves:
 * the second node answers 503 with Retry-After instead). The writes a
 * public call makes in tenants of other nodes go the same way, one by one
 * (tenantWrites.ts). The embedded default has no forwarder.
 */
import type { ApiRequest } from './request.js'
import type { ApiResponse } from './response.js'

export interface RequestForwarder {
  /** Sends the request to the node whose internal listener is at `nodeUrl`; resolves with that node's answer. */
  forward(request: ApiRequest, nodeUrl: string): Promise<ApiResponse>
  /** Runs a named write of a public call in a tenant that node holds (tenantWrites.ts); undefined: no such tenant. */
  writeElsewhere(nodeUrl: string, tenant: string, name: string, args: Record<string, unknown>): Promise<unknown>
}

/** The header that carries the client's address on a forwarded request (believed with the forwarding credential only). */
export const FORWARDED_FOR_HEADER = 'x-forwarded-for'
