/*
 * The trash resource's own operations: `GET /trash/{id}/$restore` brings an
 * item (and its cascade group) back; `DELETE /trash/{id}` empties it. Only
 * the owner, admins and the user who deleted the object may do either.
 */
import { accessDenied, ApiError, notFound } from '../../domain/errors.js'
import { renderRecord } from '../../domain/render.js'
import { emptyTrashItem, restoreFromTrash } from '../../domain/trash.js'
import type { Rec } from '../../domain/schema.js'
import type { Call, Principal } from '../call.js'
import { queryFlag } from '../request.js'
import { dataResponse } from '../response.js'
import type { ResourceAction } from './actions.js'

function mayHandle(principal: Principal, item: Rec | undefined, id: string): Rec {
  if (item === undefined) throw notFound('TrashItem', id)
  if (!principal.superuser && item.deletedBy !== principal.userId) throw accessDenied('only the owner, admins and the user who deleted it may do this')
  return item
}

function session(call: Call) {
  if (call.tenant === null || call.principal === null) throw new ApiError('TL01-1002', 'an access token is required')
  return { tenant: call.tenant, principal: call.principal }
}

const restore: ResourceAction = {
  async handle(call, _decl, id) {
    if (id === null || (call.request.method !== 'GET' && call.request.method !== 'POST')) throw new ApiError('TL01-9003', '$restore needs GET /trash/{id}/$restore')
    const { tenant, principal } = session(call)
    return tenant.write((tx) => {
      mayHandle(principal, tx.state.get('TrashItem', id), id)
      const { decl, rec } = restoreFromTrash(tx, id)
      return dataResponse(call.request, renderRecord(decl, rec, tx.state, { noExpand: queryFlag(call.request, 'no_expand') }), { root: decl.xmlItemName })
    })
  },
}

const empty: ResourceAction = {
  async handle(call, _decl, id) {
    if (id === null) throw new ApiError('TL01-9003', 'DELETE needs /trash/{id}')
    const { tenant, principal } = session(call)
    return tenant.write((tx) => {
      mayHandle(principal, tx.state.get('TrashItem', id), id)
      emptyTrashItem(tx, id)
      return dataResponse(call.request, { id, deleted: true }, { root: 'trashItem' })
    })
  },
}

export const TRASH_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([
  ['TrashItem:$restore', restore],
  ['TrashItem:DELETE', empty],
])
