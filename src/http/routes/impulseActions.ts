/*
 * Impulse (stopwatch) operations (domain/operations/impulses.ts):
 *
 *   GET|POST time/impulses/{id}/$stop         a running impulse becomes a
 *            time record and is removed, in one write; any other impulse →
 *            412 TL01-1106. `calculate_price` applies to the new record as
 *            to a POST of it.
 *   GET|POST time/impulses/{id}/$watchnotify  watchLast = now
 *
 * Both answer the resulting object, rendered after the write.
 */
import { ApiError } from '../../domain/errors.js'
import { notifyWatch, stopImpulse } from '../../domain/operations/impulses.js'
import { resourceByType } from '../../domain/resources/index.js'
import type { Call } from '../call.js'
import { requireSession } from '../requireSession.js'
import { objectAnswer } from './objectAnswer.js'
import type { ResourceAction } from './resourceAction.js'
import { writeOptionsOf } from './writeOptions.js'

function itemAction(name: string, id: string | null, call: Call): string {
  if (id === null || (call.request.method !== 'GET' && call.request.method !== 'POST')) {
    throw new ApiError('TL01-9003', `${name} needs GET or POST /time/impulses/{id}/${name}`)
  }
  return id
}

const stop: ResourceAction = {
  async handle(call, decl, rawId) {
    const id = itemAction('$stop', rawId, call)
    const { tenant, principal } = requireSession(call)
    const recordDecl = resourceByType('TimeRecord')
    const derive = writeOptionsOf(call.request, recordDecl)
    const record = await tenant.write((tx) => stopImpulse(tx, principal, decl, id, derive))
    return objectAnswer(call, tenant, recordDecl, record)
  },
}

const watchNotify: ResourceAction = {
  async handle(call, decl, rawId) {
    const id = itemAction('$watchnotify', rawId, call)
    const { tenant, principal } = requireSession(call)
    const impulse = await tenant.write((tx) => notifyWatch(tx, principal, decl, id))
    return objectAnswer(call, tenant, decl, impulse)
  },
}

export const IMPULSE_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([
  ['Impulse:$stop', stop],
  ['Impulse:$watchnotify', watchNotify],
])
