/*
 * Impulse (stopwatch) operations. Stopping a running impulse (mode
 * STOPWATCH, a start and no stop; any other → 412 TL01-1106) makes it a time
 * record — its user, project, task, client, work type, description and
 * billable, stop = now (never before the start), duration = stop − start —
 * and removes the impulse, in one write; the new record is created as a POST
 * of it would be (createObject.ts, with the same derived fields). Watch
 * notification sets watchLast = now. Permissions and validation are those of
 * the resources.
 */
import type { Caller } from '../caller.js'
import { ApiError } from '../errors.js'
import { checkRemove } from '../policy.js'
import { resourceByType } from '../resources/index.js'
import type { ChangeSession, Rec, ResourceDecl } from '../schema.js'
import { removeForGood } from '../trash.js'
import type { Tx } from '../tx.js'
import { createObject } from './createObject.js'
import type { DeriveFields } from '../deriveFields.js'
import { findVisible } from './findVisible.js'
import { changeFields } from './updateObject.js'

/** Fields a time record takes over from the impulse it is made of. */
const COPIED_FIELDS = ['user', 'project', 'task', 'client', 'workType', 'description', 'billable'] as const

function isRunning(impulse: Rec): boolean {
  return impulse.mode === 'STOPWATCH' && typeof impulse.start === 'number' && impulse.stop === null
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

/** Stops the impulse `id`; returns the time record made of it. */
export function stopImpulse(tx: Tx, caller: Caller, decl: ResourceDecl, id: string, derive?: DeriveFields): Rec {
  const impulse = findVisible(tx.state, caller, decl, id)
  if (!isRunning(impulse)) throw new ApiError('TL01-1106', `Impulse '${id}' is not running (a running impulse has mode STOPWATCH, a start and no stop)`)
  checkRemove(caller, decl, impulse, tx.state)
  const record = createObject(tx, caller, resourceByType('TimeRecord'), timeRecordValues(impulse, tx.now), derive)
  removeForGood(tx, decl, impulse)
  return record
}

export function notifyWatch(tx: Tx, caller: Caller & ChangeSession, decl: ResourceDecl, id: string): Rec {
  return changeFields(tx, caller, decl, id, { watchLast: tx.now })
}
