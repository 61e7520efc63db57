/*
 * Views: `GET /{path}/@{name}` lists the records of a resource that a view
 * accepts, relative to the caller, with every query option of a list.
 * A view is a predicate prepared once per request (so a view that needs
 * the caller's memberships gathers them once); the list machinery does the
 * rest (trash, visibility, $filter, paging). A view whose records all have
 * one of a few values in one field (the caller's id as owner or user, the
 * ids of the caller's memberships) says so (`pin`), and the planner reads
 * those values' records from the field's index (or the primary map, for
 * `id`) instead of testing every record of the collection: `users/@self`
 * reads one user, not all of them.
 */
import type { Rec } from '../../domain/schema.js'
import type { TenantState } from '../../engine/tenantState.js'
import type { ListScope, ScopePin } from '../../query/plan.js'
import type { Principal } from '../call.js'

export interface View {
  /** The view for this caller, worked out once per request. */
  prepare(state: TenantState, principal: Principal): PreparedView
}

export interface PreparedView {
  accepts(rec: Rec): boolean
  /** Values of a field one of which every accepted record has (see the top). */
  pin?: ScopePin
}

/** A view of the records whose `field` is the caller's id (and that `also` accepts). */
function callersIn(field: string, also: (rec: Rec) => boolean = () => true): View {
  return {
    prepare: (_state, principal) => ({ accepts: (rec) => rec[field] === principal.userId && also(rec), pin: { field, values: [principal.userId] } }),
  }
}

/** A view of the records whose id is in `ids`. */
function withIds(ids: Set<string>): PreparedView {
  return { accepts: (rec) => ids.has(rec.id), pin: { field: 'id', values: [...ids] } }
}

/** Values of `pick` on the live records of `type` whose `field` is `value` (memberships of a user). */
function liveValues(state: TenantState, type: string, field: string, value: string, pick: string): Set<string> {
  const values = new Set<string>()
  for (const rec of state.collection(type).lookup(field, value)) {
    const picked = rec[pick]
    if (rec.trashItem === null && typeof picked === 'string') values.add(picked)
  }
  return values
}

/** A view of the records whose id is among the caller's live memberships of `memberType`. */
function memberOf(memberType: string, parentField: string): View {
  return { prepare: (state, principal) => withIds(liveValues(state, memberType, 'user', principal.userId, parentField)) }
}

/** Creation order: createdAt, then id. */
function byCreation(a: Rec, b: Rec): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
}

/** Accesses beyond the account's licenseLimit per product: the later ones (by createdAt, then id). */
function exceededAccesses(state: TenantState): Set<string> {
  const exceeded = new Set<string>()
  const account = state.collection('Account').values().next().value
  const limit = account?.licenseLimit
  if (typeof limit !== 'number') return exceeded
  const byProduct = new Map<unknown, Rec[]>()
  for (const access of state.collection('Access').values()) {
    if (access.trashItem !== null) continue
    const list = byProduct.get(access.product) ?? []
    list.push(access)
    byProduct.set(access.product, list)
  }
  for (const accesses of byProduct.values()) {
    for (const access of accesses.sort(byCreation).slice(Math.max(0, limit))) exceeded.add(access.id)
  }
  return exceeded
}

const VIEWS = new Map<string, View>([
  ['Project:@own', callersIn('owner')],
  ['Project:@member', memberOf('ProjectMember', 'project')],
  ['Project:@trackable', { prepare: () => ({ accepts: (rec) => rec.active === true && rec.effective === true }) }],
  ['Impulse:@stopwatch', callersIn('user', (rec) => rec.mode === 'STOPWATCH')],
  ['Impulse:@default', callersIn('user')],
  ['Department:@member', memberOf('DepartmentMember', 'department')],
  ['User:@self', callersIn('id')],
  ['Account:@own', { prepare: () => ({ accepts: () => true }) }],
  ['Access:@exceeded', { prepare: (state) => withIds(exceededAccesses(state)) }],
])

export function findView(type: string, name: string): View | undefined {
  return VIEWS.get(`${type}:${name}`)
}

/** What a list of the view reads for the caller: the view prepared on first use, its predicate and its pin. */
export function viewScope(view: View, principal: Principal): ListScope {
  let prepared: PreparedView | undefined
  const prepare = (state: TenantState) => (prepared ??= view.prepare(state, principal))
  return { kind: 'view', accepts: (rec, state) => prepare(state).accepts(rec), pin: (state) => prepare(state).pin }
}
