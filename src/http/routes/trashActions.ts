/*
 * The trash resource's own operations (domain/operations/trashItems.ts):
 * `GET /trash/{id}/$restore` brings an item (and its cascade group) back and
 * answers the restored object; `DELETE /trash/{id}` empties it.
 */
import { ApiError } from '../../domain/errors.js'
import { emptyTrash, restoreTrashItem } from '../../domain/operations/trashItems.js'
import { requireSession } from '../requireSession.js'
import { dataResponse } from '../response.js'
import { objectAnswer } from './objectAnswer.js'
import type { ResourceAction } from './resourceAction.js'

const restore: ResourceAction = {
  async handle(call, itemDecl, id) {
    if (id === null || (call.request.method !== 'GET' && call.request.method !== 'POST')) throw new ApiError('TL01-9003', '$restore needs GET /trash/{id}/$restore')
    const { tenant, principal } = requireSession(call)
    const { decl, rec } = await tenant.write((tx) => restoreTrashItem(tx, principal, itemDecl, id))
    return objectAnswer(call, tenant, decl, rec)
  },
}

const empty: ResourceAction = {
  async handle(call, itemDecl, id) {
    if (id === null) throw new ApiError('TL01-9003', 'DELETE needs /trash/{id}')
    const { tenant, principal } = requireSession(call)
    await tenant.write((tx) => emptyTrash(tx, principal, itemDecl, id))
    return dataResponse(call.request, { id, deleted: true }, { root: 'trashItem' })
  },
}

export const TRASH_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([
  ['TrashItem:$restore', restore],
  ['TrashItem:DELETE', empty],
])
