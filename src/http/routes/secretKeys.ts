/*
 * The caller's secret keys: `/users/@self/secretkeys` (fixed routes, so
 * they match before the users resource).
 *
 *   POST   …/secretkeys        creates one; the answer is the SecretKey with
 *                              its `secretKey` text, shown this once
 *   GET    …/secretkeys        lists the caller's keys (list options apply;
 *                              `secretKey` is never stored, so never shown)
 *   DELETE …/secretkeys/{id}   removes a key for good (a revoked credential
 *                              must not come back from the trash)
 *
 * The record's id is derived from the key (secretKeys.ts); login looks the
 * key up by it.
 */
import { notFound } from '../../domain/errors.js'
import { isPlainObject, readFields } from '../../domain/input.js'
import { insertRecord } from '../../domain/records.js'
import { renderRecord } from '../../domain/render.js'
import { resourceByType } from '../../domain/resources/index.js'
import type { ResourceDecl } from '../../domain/schema.js'
import { newSecretKey, secretKeyId } from '../../domain/secretKeys.js'
import { removeForGood } from '../../domain/trash.js'
import { parseBody } from '../body.js'
import type { Call, Principal, TenantAccess } from '../call.js'
import { queryFlag } from '../request.js'
import { dataResponse, type ApiResponse } from '../response.js'
import { planList } from '../../query/plan.js'

function secretKeyDecl(): ResourceDecl {
  return resourceByType('SecretKey')
}

function session(call: Call): { tenant: TenantAccess; principal: Principal } {
  if (call.tenant === null || call.principal === null) throw new Error('secret-key routes are authenticated tenant routes')
  return { tenant: call.tenant, principal: call.principal }
}

/** The writable fields of the body that a caller may choose: only `name` (the user is the caller). */
function chosenFields(call: Call, decl: ResourceDecl): Record<string, unknown> {
  const { value, source } = parseBody(call.request)
  if (value === undefined) return {}
  const values = readFields(decl, isPlainObject(value) ? value : {}, source, true)
  return 'name' in values ? { name: values.name } : {}
}

export async function createSecretKey(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = session(call)
  const decl = secretKeyDecl()
  const chosen = chosenFields(call, decl)
  const key = newSecretKey()
  return tenant.write((tx) => {
    const rec = insertRecord(tx, decl, Object.assign({}, chosen, { id: secretKeyId(key), user: principal.userId }), principal)
    const out = renderRecord(decl, rec, tx.state, { noExpand: queryFlag(call.request, 'no_expand') })
    return dataResponse(call.request, Object.assign({}, out, { secretKey: key }), { root: decl.xmlItemName }, 201)
  })
}

export async function listSecretKeys(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = session(call)
  const decl = secretKeyDecl()
  const plan = planList(decl, call.request.query)
  return tenant.read((state) => {
    const recs = plan.run(state, principal, { kind: 'children', via: 'user', parentId: principal.userId })
    const out = recs.map((rec) => renderRecord(decl, rec, state, { noExpand: queryFlag(call.request, 'no_expand') }))
    return dataResponse(call.request, out, { root: decl.xmlListName, item: decl.xmlItemName })
  })
}

export async function deleteSecretKey(call: Call, params: Record<string, string>): Promise<ApiResponse> {
  const { tenant, principal } = session(call)
  const decl = secretKeyDecl()
  const id = params.id ?? ''
  return tenant.write((tx) => {
    const rec = tx.state.get(decl.type, id)
    if (rec === undefined || rec.user !== principal.userId) throw notFound(decl.type, id)
    removeForGood(tx, decl, rec)
    return dataResponse(call.request, { id, deleted: true }, { root: decl.xmlItemName })
  })
}
