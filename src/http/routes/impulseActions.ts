/*
 * Impulse (stopwatch) operations:
 *
 *   GET|POST time/impulses/{id}/$stop         a running impulse (STOPWATCH,
 *            start set, stop null) becomes a time record (stop = now,
 *            duration = stop − start) and the impulse is removed, in one
 *            write; any other impulse → 412 TL01-1106. `calculate_price`
 *            applies to the new record as to a POST of it.
 *   GET|POST time/impulses/{id}/$watchnotify  watchLast = now
 *
 * Both answer the resulting object. The generic createIn/updateIn apply, so
 * permissions and validation are those of the resources.
 */
import { ApiError } from '../../domain/errors.js'
import { checkRemove } from '../../domain/policy.js'
import { renderRecord } from '../../domain/render.js'
import { resourceByType } from '../../domain/resources/index.js'
import type { DisplayContext, Rec, ResourceDecl } from '../../domain/schema.js'
import { removeForGood } from '../../domain/trash.js'
import type { Call } from '../call.js'
import { queryFlag } from '../request.js'
import { dataResponse, type ApiResponse } from '../response.js'
import type { ResourceAction } from './actions.js'
import { createIn, findVisible, updateIn } from './resources.js'
import { writeOptionsOf } from './writeOptions.js'
import { requireSession } from '../requireSession.js'

/** Fields a time record takes over from the impulse it is made of. */
const COPIED_FIELDS = ['user', 'project', 'task', 'client', 'workType', 'description', 'billable'] as const

function itemAction(name: string, id: string | null, call: Call): string {
  if (id === null || (call.request.method !== 'GET' && call.request.method !== 'POST')) {
    throw new ApiError('TL01-9003', `${name} needs GET or POST /time/impulses/{id}/${name}`)
  }
  return id
}

function isRunning(impulse: Rec): boolean {
  return impulse.mode === 'STOPWATCH' && typeof impulse.start === 'number' && impulse.stop === null
}

function answer(call: Call, decl: ResourceDecl, rec: Rec, state: DisplayContext): ApiResponse {
  return dataResponse(call.request, renderRecord(decl, rec, state, { noExpand: queryFlag(call.request, 'no_expand') }), { root: decl.xmlItemName })
}

/** The time record values of a running impulse stopped at `now`. */
function timeRecordValues(impulse: Rec, now: number): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const name of COPIED_FIELDS) values[name] = impulse[name]
  const start = impulse.start as number
  const stop = Math.max(now, start)
  values.start = start
  values.stop = stop
  values.duration = stop - start
  return values
}

const stop: ResourceAction = {
  async handle(call, decl, rawId) {
    const id = itemAction('$stop', rawId, call)
    const { tenant, principal } = requireSession(call)
    const recordDecl = resourceByType('TimeRecord')
    const derive = writeOptionsOf(call.request, recordDecl)
    return tenant.write((tx) => {
      const impulse = findVisible(tx.state, principal, decl, id)
      if (!isRunning(impulse)) throw new ApiError('TL01-1106', `Impulse '${id}' is not running (a running impulse has mode STOPWATCH, a start and no stop)`)
      checkRemove(principal, decl, impulse, tx.state)
      const record = createIn(tx, principal, recordDecl, timeRecordValues(impulse, tx.now), derive)
      removeForGood(tx, decl, impulse)
      return answer(call, recordDecl, record, tx.state)
    })
  },
}

const watchNotify: ResourceAction = {
  async handle(call, decl, rawId) {
    const id = itemAction('$watchnotify', rawId, call)
    const { tenant, principal } = requireSession(call)
    return tenant.write((tx) => answer(call, decl, updateIn(tx, principal, decl, id, { watchLast: tx.now }, null, false), tx.state))
  },
}

export const IMPULSE_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([
  ['Impulse:$stop', stop],
  ['Impulse:$watchnotify', watchNotify],
])
