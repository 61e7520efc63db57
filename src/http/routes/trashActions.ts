/*
 * The trash resource's own operations: `GET /trash/{id}/$restore` brings an
 * item (and its cascade group) back; `DELETE /trash/{id}` empties it. An
 * item the caller may not see (its deleted object is hidden from them) is
 * not found; either operation needs the right to delete that object, the
 * right the delete itself needed.
 */
import { ApiError, notFound } from '../../domain/errors.js'
import { canSee, checkRemove } from '../../domain/policy.js'
import { renderRecord } from '../../domain/render.js'
import { emptyTrashItem, restoreFromTrash, trashedObject } from '../../domain/trash.js'
import type { ResourceDecl } from '../../domain/schema.js'
import type { TenantState } from '../../engine/tenantState.js'
import type { Principal } from '../call.js'
import { queryFlag } from '../request.js'
import { dataResponse } from '../response.js'
import type { ResourceAction } from './actions.js'
import { requireSession } from '../requireSession.js'

/** 404 unless the caller sees the trash item; 403 unless they may delete its object. */
function mayHandle(principal: Principal, itemDecl: ResourceDecl, state: TenantState, id: string): void {
  const item = state.get(itemDecl.type, id)
  if (item === undefined || !canSee(principal, itemDecl, item, state)) throw notFound(itemDecl.type, id)
  const { decl, rec } = trashedObject(state, item)
  checkRemove(principal, decl, rec, state)
}

const restore: ResourceAction = {
  async handle(call, itemDecl, id) {
    if (id === null || (call.request.method !== 'GET' && call.request.method !== 'POST')) throw new ApiError('TL01-9003', '$restore needs GET /trash/{id}/$restore')
    const { tenant, principal } = requireSession(call)
    return tenant.write((tx) => {
      mayHandle(principal, itemDecl, tx.state, id)
      const { decl, rec } = restoreFromTrash(tx, id)
      return dataResponse(call.request, renderRecord(decl, rec, tx.state, { noExpand: queryFlag(call.request, 'no_expand') }), { root: decl.xmlItemName })
    })
  },
}

const empty: ResourceAction = {
  async handle(call, itemDecl, id) {
    if (id === null) throw new ApiError('TL01-9003', 'DELETE needs /trash/{id}')
    const { tenant, principal } = requireSession(call)
    return tenant.write((tx) => {
      mayHandle(principal, itemDecl, tx.state, id)
      emptyTrashItem(tx, id)
      return dataResponse(call.request, { id, deleted: true }, { root: 'trashItem' })
    })
  },
}

export const TRASH_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([
  ['TrashItem:$restore', restore],
  ['TrashItem:DELETE', empty],
])
