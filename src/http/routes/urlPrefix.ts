/*
 * `POST|PUT accounts/{id}/$setUrlPrefix?urlPrefix=…` (or a body {"urlPrefix": …}; `@own` for the account):
 * moves the tenant to the new name, its host (domain/operations/urlPrefixChange.ts decides,
 * tenants/tenantRename.ts moves). The checks run first on the tenant as it is; the move is an exclusive job
 * of the tenant (refused inside a batch, which holds the tenant itself). The answer is the account as the
 * tenant at its new address shows it; the same prefix again answers the account unchanged.
 */
import { ApiError } from '../../domain/errors.js'
import { changeUrlPrefix, checkUrlPrefixChange, normalUrlPrefix } from '../../domain/operations/urlPrefixChange.js'
import { requireSession } from '../requireSession.js'
import { stringParameter } from './actionParameter.js'
import { onObjectOnly } from './actionShape.js'
import { objectAnswer } from './objectAnswer.js'
import type { ResourceAction } from './resourceAction.js'

const setUrlPrefix: ResourceAction = {
  async handle(call, decl, rawId) {
    const id = onObjectOnly(call, '$setUrlPrefix', rawId, ['POST', 'PUT'])
    const { tenant, principal } = requireSession(call)
    if (call.request.inBatch) throw new ApiError('TL01-1103', 'the URL prefix cannot be changed inside a batch')
    // A keyed write holds its tenant (http/keyedWrite.ts); the move needs the tenant to itself.
    if (call.keyed !== undefined) throw new ApiError('TL01-1112', 'the URL prefix is changed without an Idempotency-Key')
    const urlPrefix = normalUrlPrefix(stringParameter(call, '$setUrlPrefix', 'urlPrefix'))
    const account = await tenant.read((state) => checkUrlPrefixChange(state, principal, id, urlPrefix))
    if (account.urlPrefix === urlPrefix || call.tenantName === null) return objectAnswer(call, tenant, decl, account)
    const { registry } = call.services
    const changed = await registry.rename(call.tenantName, urlPrefix, (tx) => changeUrlPrefix(tx, urlPrefix))
    const moved = await registry.open(urlPrefix)
    if (moved === undefined) throw new ApiError('TL01-1005', `no account at the address '${urlPrefix}'`)
    return objectAnswer(call, moved, decl, changed)
  },
}

export const URL_PREFIX_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([['Account:$setUrlPrefix', setUrlPrefix]])
