/*
 * The registry of resource actions: operations beyond CRUD on one object or
 * a collection, `/{path}/{id}/${name}` or `/{path}/${name}` (and what DELETE
 * means for the trash, what POST on the collection means for secret keys).
 * Each is registered under its resource type and name (resourceAction.ts
 * says what an action is); resources.ts looks them up here.
 */
import { BILL_NUMBERING_ACTIONS } from './billNumbering.js'
import { IMPULSE_ACTIONS } from './impulseActions.js'
import { PASSWORD_ACTIONS } from './passwordChange.js'
import { PRICING_ACTIONS } from './pricingActions.js'
import { PROJECT_ACTIONS } from './projectActions.js'
import { SECRET_KEY_ACTIONS } from './secretKeys.js'
import type { ResourceAction } from './resourceAction.js'
import { TRASH_ACTIONS } from './trashActions.js'
import { URL_PREFIX_ACTIONS } from './urlPrefix.js'
import { USER_EMAIL_ACTIONS } from './userEmail.js'
import { WEBHOOK_ACTIONS } from './webhooks.js'

const ACTIONS = new Map<string, ResourceAction>([
  ...PRICING_ACTIONS,
  ...TRASH_ACTIONS,
  ...PASSWORD_ACTIONS,
  ...IMPULSE_ACTIONS,
  ...PROJECT_ACTIONS,
  ...SECRET_KEY_ACTIONS,
  ...BILL_NUMBERING_ACTIONS,
  ...USER_EMAIL_ACTIONS,
  ...URL_PREFIX_ACTIONS,
  ...WEBHOOK_ACTIONS,
])

export function findAction(type: string, name: string): ResourceAction | undefined {
  return ACTIONS.get(`${type}:${name}`)
}

/** Every registered action as `Type:name` (a name is `$…`, or the method it gives a meaning to): the API description lists them. */
export function actionKeys(): string[] {
  return [...ACTIONS.keys()]
}
