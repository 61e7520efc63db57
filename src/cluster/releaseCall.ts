/*
 * Handing a tenant back (clusterTools.ts): an operator that must be a
 * tenant's only writer asks the node holding it, on that node's internal
 * listener, to give it back:
 *
 *   POST /cluster/tenants/<tenant>/release   (X-TimeLedger-Node: the node credential, http/clusterCredentials.ts)
 *
 * The node puts the tenant to rest (its snapshot written, its lease given
 * back: TenantRegistry.evict) and, for HAND_BACK_MS, claims it for nobody
 * (clusterPlacement.ts: its requests are answered 503 with Retry-After),
 * so the operator's claim is not raced by the node's own next request.
 * Answers 200 {released: true} once given back, or {released: false} when
 * the tenant was busy (the operator asks again) or not held there.
 */
import http from 'node:http'
import { nodeCallHeaders } from '../http/clusterCredentials.js'

/** How long a node leaves a tenant it handed back to an operator. */
export const HAND_BACK_MS = 5_000

/** The path of the call (clusterCalls.ts). */
export const RELEASE_CALL = 'cluster/tenants/:tenant/release'

/** Asks the node at `internalUrl` to give the tenant back; true when it did. */
export function releaseOnNode(internalUrl: string, secret: string, tenant: string): Promise<boolean> {
  const url = new URL(`/cluster/tenants/${encodeURIComponent(tenant)}/release`, internalUrl)
  return new Promise((resolve) => {
    const request = http.request(url, { method: 'POST', headers: { ...nodeCallHeaders(secret), 'content-length': '0' }, agent: false, timeout: 30_000 }, (response) => {
      let text = ''
      response.on('data', (chunk: Buffer) => (text += chunk.toString()))
      response.on('end', () => {
        try {
          resolve(response.statusCode === 200 && (JSON.parse(text) as { released?: unknown }).released === true)
        } catch {
          resolve(false)
        }
      })
    })
    request.on('timeout', () => request.destroy())
    request.on('error', () => resolve(false))
    request.end()
  })
}
