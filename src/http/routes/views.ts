/*
 * Views: `GET /{path}/@{name}` lists the records of a resource that a view
 * accepts, relative to the caller, with every query option of a list.
 * A view is one predicate; the list machinery does the rest.
 */
import type { Rec } from '../../domain/schema.js'
import type { TenantState } from '../../engine/tenantState.js'
import type { Principal } from '../call.js'

export interface View {
  accepts(rec: Rec, state: TenantState, principal: Principal): boolean
}

const VIEWS = new Map<string, View>([
  ['Project:@own', { accepts: (rec, _state, principal) => rec.owner === principal.userId }],
  ['User:@self', { accepts: (rec, _state, principal) => rec.id === principal.userId }],
  ['Account:@own', { accepts: () => true }],
])

export function findView(type: string, name: string): View | undefined {
  return VIEWS.get(`${type}:${name}`)
}

