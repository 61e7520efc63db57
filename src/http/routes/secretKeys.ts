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
 * The generic `POST /secretkeys` is the same creation (the SecretKey:POST
 * action): a key is made by the server, for the caller only
 * (domain/secretKeys.ts).
 */
import { convertValue, isPlainObject, readFields } from '../../domain/input.js'
import { createSecretKey as storeSecretKey, removeOwnSecretKey, type SecretKeyRequest } from '../../domain/operations/secretKeys.js'
import { renderRecord } from '../../domain/render.js'
import { resourceByType } from '../../domain/resources/index.js'
import type { FieldDecl, ResourceDecl } from '../../domain/schema.js'
import { newSecretKey } from '../../domain/secretKeys.js'
import { parseBody } from '../body.js'
import type { Call } from '../call.js'
import { queryFlag } from '../request.js'
import { dataResponse, type ApiResponse } from '../response.js'
import { planList } from '../../query/plan.js'
import { objectAnswer } from './objectAnswer.js'
import type { ResourceAction } from './resourceAction.js'
import { requireSession } from '../requireSession.js'

function secretKeyDecl(): ResourceDecl {
  return resourceByType('SecretKey')
}

/** What the body says about the new key: its name and expiration (validated as the fields), and the user, id and text it may not choose. */
function keyRequest(call: Call, decl: ResourceDecl): SecretKeyRequest {
  const { value, source } = parseBody(call.request)
  if (!isPlainObject(value)) return {}
  const values = readFields(decl, value, source, true)
  // `user` is read-only, so readFields leaves it out: it is read as the reference it is, to refuse another user.
  const userField = decl.fieldsByName.get('user') as FieldDecl
  const user = value.user === undefined ? undefined : convertValue(decl, userField, value.user, source)
  return { name: values.name, expiration: values.expiration, user, id: value.id, secretKey: value.secretKey }
}

export async function createSecretKey(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const decl = secretKeyDecl()
  const request = keyRequest(call, decl)
  // Random, so decided before the write; only its hash is stored and logged.
  const key = newSecretKey()
  const rec = await tenant.write((tx) => storeSecretKey(tx, principal, request, key))
  return objectAnswer(call, tenant, decl, rec, 201, { secretKey: key })
}

/** `POST /secretkeys`, the generic path: the same as `POST /users/@self/secretkeys`. */
export const SECRET_KEY_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([['SecretKey:POST', { handle: (call: Call) => createSecretKey(call) }]])

export async function listSecretKeys(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const decl = secretKeyDecl()
  const plan = planList(decl, call.request.query)
  return tenant.read((state) => {
    const recs = plan.run(state, principal, { kind: 'children', via: 'user', parentId: principal.userId })
    const out = recs.map((rec) => renderRecord(decl, rec, state, { noExpand: queryFlag(call.request, 'no_expand') }))
    return dataResponse(call.request, out, { root: decl.xmlListName, item: decl.xmlItemName })
  })
}

export async function deleteSecretKey(call: Call, params: Record<string, string>): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const decl = secretKeyDecl()
  const id = params.id ?? ''
  await tenant.write((tx) => removeOwnSecretKey(tx, principal, id))
  return dataResponse(call.request, { id, deleted: true }, { root: decl.xmlItemName })
}
