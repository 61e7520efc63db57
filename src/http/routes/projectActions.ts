/*
 * Project operations: `time/projects/{id}/$activate` and `$deactivate` set
 * `active` (GET, POST or PUT) and answer the project
 * (domain/operations/projectActivation.ts: an update that checks no
 * version, like `$set` without `version`).
 */
import { ApiError } from '../../domain/errors.js'
import { setProjectActive } from '../../domain/operations/projectActivation.js'
import { requireSession } from '../requireSession.js'
import { objectAnswer } from './objectAnswer.js'
import type { ResourceAction } from './resourceAction.js'

const METHODS = ['GET', 'POST', 'PUT']

function setActive(name: string, active: boolean): ResourceAction {
  return {
    async handle(call, decl, id) {
      if (id === null || !METHODS.includes(call.request.method)) throw new ApiError('TL01-9003', `${name} needs GET, POST or PUT /time/projects/{id}/${name}`)
      const { tenant, principal } = requireSession(call)
      const after = await tenant.write((tx) => setProjectActive(tx, principal, decl, id, active))
      return objectAnswer(call, tenant, decl, after)
    },
  }
}

export const PROJECT_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([
  ['Project:$activate', setActive('$activate', true)],
  ['Project:$deactivate', setActive('$deactivate', false)],
])
