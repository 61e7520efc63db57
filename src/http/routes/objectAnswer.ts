/*
 * The answer of an operation that answers the object it wrote (actions,
 * restore, a new secret key): rendered after the write, from the record the
 * operation returned, with the state a read after the write gives (it
 * resolves display names and references; the read waits for durability, see
 * tenantActor.ts). In a batch that read sees the batch's transaction.
 */
import { renderRecord, type OutObject } from '../../domain/render.js'
import type { Rec, ResourceDecl } from '../../domain/schema.js'
import type { MaybePromise } from '../../maybePromise.js'
import type { Call, TenantAccess } from '../call.js'
import { queryFlag } from '../request.js'
import { dataResponse, type ApiResponse } from '../response.js'

/** `extra` adds fields to the rendered object (a new secret key's text, shown this once). */
export function objectAnswer(call: Call, tenant: TenantAccess, decl: ResourceDecl, rec: Rec, status = 200, extra?: Readonly<Record<string, unknown>>): MaybePromise<ApiResponse> {
  return tenant.read((state) => {
    const out: OutObject = renderRecord(decl, rec, state, { noExpand: queryFlag(call.request, 'no_expand') })
    return dataResponse(call.request, extra === undefined ? out : Object.assign({}, out, extra), { root: decl.xmlItemName }, status)
  })
}
