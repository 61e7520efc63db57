/*
 * Project operations: `time/projects/{id}/$activate` and `$deactivate` set
 * `active` (GET, POST or PUT) and answer the project. They are updates
 * through the generic updateIn, so permissions and validation apply; the
 * version is not checked (like `$set` without `version`).
 */
import { ApiError } from '../../domain/errors.js'
import { renderRecord } from '../../domain/render.js'
import { queryFlag } from '../request.js'
import { dataResponse } from '../response.js'
import type { ResourceAction } from './actions.js'
import { updateIn } from './resources.js'
import { requireSession } from '../requireSession.js'

const METHODS = ['GET', 'POST', 'PUT']

function setActive(name: string, active: boolean): ResourceAction {
  return {
    async handle(call, decl, id) {
      if (id === null || !METHODS.includes(call.request.method)) throw new ApiError('TL01-9003', `${name} needs GET, POST or PUT /time/projects/{id}/${name}`)
      const { tenant, principal } = requireSession(call)
      return tenant.write((tx) => {
        const after = updateIn(tx, principal, decl, id, { active }, null, false)
        return dataResponse(call.request, renderRecord(decl, after, tx.state, { noExpand: queryFlag(call.request, 'no_expand') }), { root: decl.xmlItemName })
      })
    },
  }
}

export const PROJECT_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([
  ['Project:$activate', setActive('$activate', true)],
  ['Project:$deactivate', setActive('$deactivate', false)],
])
