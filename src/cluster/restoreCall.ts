/*
 * A restore to a point of a tenant's history, online through the node that
 * holds the tenant, to a sequence number or a point in time. The operator's CLI asks a node on its internal listener:
 *
 *   POST /cluster/tenants/<tenant>/restore   (X-TimeLedger-Node: the node credential, http/clusterCredentials.ts)
 *        body {"toSeq": n} | {"toTime": "<ISO time>"}
 *
 * The node runs the same online restore as the embedded admin listener
 * (tenants/onlineRestore.ts): the tenant keeps serving while its state is
 * rebuilt and waits only for the history fetch and the swap. A node that
 * does not hold the tenant claims it when nobody does; when another node
 * holds a live lease it answers 421 {"nodeId", "nodeUrl"} and the CLI asks
 * that node (the lease may move meanwhile: it follows at most
 * MAX_REDIRECTS). Answers 200 with the restore's outcome, or the error body
 * of ARCHITECTURE.md §4 (400 for a point outside the history, 412 for a restore
 * already running).
 *
 * A snapshot file (`restore --from`) is on the operator's machine, not the
 * node's: that restore runs in the CLI as the tenant's writer
 * (clusterTools.ts: the node hands the tenant back meanwhile).
 */
import http from 'node:http'
import { ApiError } from '../domain/errors.js'
import { nodeCallHeaders } from '../http/clusterCredentials.js'
import { restoreErrorAsApiError } from '../http/refusalAnswers.js'
import { plainErrorResponse, type ApiResponse } from '../http/response.js'
import type { OnlineRestores, RestoreAnswer } from '../tenants/onlineRestore.js'
import { parseRestoreSource } from '../tenants/restoreSource.js'
import { TenantElsewhere } from '../tenants/tenantErrors.js'

/** The path of the call (clusterCalls.ts). */
export const RESTORE_CALL = 'cluster/tenants/:tenant/restore'

/** A point of the history: what the CLI sends. */
export type RestorePoint = { toSeq: number } | { toTime: string }

/** How many times the CLI follows a lease that moved while it asked. */
const MAX_REDIRECTS = 3
/** How long the CLI waits for a node's answer (a restore of a big tenant rebuilds it whole). */
const RESTORE_TIMEOUT_MS = 10 * 60_000

const json = (status: number, body: unknown): ApiResponse => ({ status, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })

/** The internal listener's side: runs the restore here, or names the node holding the tenant (421). */
export async function restoreCall(restores: OnlineRestores, tenant: string, body: Buffer): Promise<ApiResponse> {
  try {
    let point: Record<string, unknown>
    try {
      point = JSON.parse(body.toString('utf8')) as Record<string, unknown>
    } catch {
      throw new ApiError('TL01-1105', 'the body must be JSON: {"toSeq": n} or {"toTime": ISO time}')
    }
    const text = (value: unknown): string | undefined => (value === undefined || value === null ? undefined : String(value))
    if (typeof point !== 'object' || point === null || point.from !== undefined) {
      throw new ApiError('TL01-1105', 'a node restores a point of the history ({"toSeq": n} or {"toTime": ISO time}); a snapshot file is restored by the CLI')
    }
    const source = parseRestoreSource({ toSeq: text(point.toSeq), toTime: text(point.toTime) })
    const restore = await restores.begin(tenant)
    return json(200, await restore(source))
  } catch (error) {
    if (error instanceof TenantElsewhere) return json(421, { nodeId: error.nodeId, nodeUrl: error.nodeUrl })
    const answer = restoreErrorAsApiError(error)
    if (answer instanceof ApiError) return plainErrorResponse(answer)
    throw answer
  }
}

/** The CLI's side: asks the node at `internalUrl`, following the lease when it moved; the outcome, or an Error saying why not. */
export async function restoreThroughNode(internalUrl: string, secret: string, tenant: string, point: RestorePoint): Promise<RestoreAnswer> {
  let url = internalUrl
  for (let redirects = 0; ; redirects += 1) {
    const { status, body } = await postJson(new URL(`/cluster/tenants/${encodeURIComponent(tenant)}/restore`, url), secret, point)
    if (status === 200) return body as RestoreAnswer
    if (status === 421 && redirects < MAX_REDIRECTS) {
      const { nodeUrl, nodeId } = body as { nodeUrl?: string; nodeId?: string }
      if (typeof nodeUrl !== 'string' || nodeUrl === '') throw new Error(`tenant '${tenant}' is held by ${nodeId ?? 'a node'} whose address is not known; try again`)
      url = nodeUrl
      continue
    }
    const message = (body as { message?: unknown } | null)?.message
    throw new Error(`the node at ${url} answered ${status}: ${typeof message === 'string' ? message : JSON.stringify(body)}`)
  }
}

function postJson(url: URL, secret: string, payload: unknown): Promise<{ status: number; body: unknown }> {
  const bytes = Buffer.from(JSON.stringify(payload))
  return new Promise((resolve, reject) => {
    const headers = { ...nodeCallHeaders(secret), 'content-type': 'application/json', 'content-length': String(bytes.length) }
    const request = http.request(url, { method: 'POST', headers, agent: false, timeout: RESTORE_TIMEOUT_MS }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        try {
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as unknown })
        } catch {
          resolve({ status: response.statusCode ?? 0, body: text })
        }
      })
    })
    request.on('timeout', () => request.destroy(new Error(`no answer from ${url.origin} within ${RESTORE_TIMEOUT_MS} ms`)))
    request.on('error', reject)
    request.end(bytes)
  })
}
