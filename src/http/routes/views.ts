/*
 * Views: `GET /{path}/@{name}` lists the records of a resource that a view
 * accepts, relative to the caller, with every query option of a list.
 * A view is one predicate, prepared once per request (so a view that needs
 * the caller's memberships gathers them once); the list machinery does the
 * rest (trash, visibility, $filter, paging). A view whose records all have
 * one value in one field (the caller's id, as owner or user) says so
 * (`pin`), and the planner reads that value's records from the field's
 * index (or the record itself, for `id`) instead of testing every record
 * of the collection: `users/@self` read one user, not all of them.
 */
import type { Rec } from '../../domain/schema.js'
import type { TenantState } from '../../engine/tenantState.js'
import type { ListScope, ScopePin } from '../../query/plan.js'
import type { Principal } from '../call.js'

export interface View {
  select(state: TenantState, principal: Principal): (rec: Rec) => boolean
  /** The field and value that every record the view accepts has (see the top). */
  pin?(principal: Principal): ScopePin
}

/** The caller's id in `field`: a view's pin. */
const callerIn = (field: string) => (principal: Principal): ScopePin => ({ field, value: principal.userId })

/** Values of `pick` on the live records of `type` whose `field` is `value` (memberships of a user). */
function liveValues(state: TenantState, type: string, field: string, value: string, pick: string): Set<unknown> {
  const values = new Set<unknown>()
  for (const rec of state.collection(type).lookup(field, value)) if (rec.trashItem === null) values.add(rec[pick])
  return values
}

/** A view of the records whose id is among the caller's live memberships of `memberType`. */
function memberOf(memberType: string, parentField: string): View {
  return {
    select: (state, principal) => {
      const parents = liveValues(state, memberType, 'user', principal.userId, parentField)
      return (rec) => parents.has(rec.id)
    },
  }
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
  ['Project:@own', { select: (_state, principal) => (rec) => rec.owner === principal.userId, pin: callerIn('owner') }],
  ['Project:@member', memberOf('ProjectMember', 'project')],
  ['Project:@trackable', { select: () => (rec) => rec.active === true && rec.effective === true }],
  ['Impulse:@stopwatch', { select: (_state, principal) => (rec) => rec.user === principal.userId && rec.mode === 'STOPWATCH', pin: callerIn('user') }],
  ['Impulse:@default', { select: (_state, principal) => (rec) => rec.user === principal.userId, pin: callerIn('user') }],
  ['Department:@member', memberOf('DepartmentMember', 'department')],
  ['User:@self', { select: (_state, principal) => (rec) => rec.id === principal.userId, pin: callerIn('id') }],
  ['Account:@own', { select: () => () => true }],
  [
    'Access:@exceeded',
    {
      select: (state) => {
        const exceeded = exceededAccesses(state)
        return (rec) => exceeded.has(rec.id)
      },
    },
  ],
])

export function findView(type: string, name: string): View | undefined {
  return VIEWS.get(`${type}:${name}`)
}

/** What a list of the view reads for the caller: its predicate, prepared on first use, and its pin. */
export function viewScope(view: View, principal: Principal): ListScope {
  let accepts: ((rec: Rec) => boolean) | undefined
  return { kind: 'view', accepts: (rec, state) => (accepts ??= view.select(state, principal))(rec), pin: view.pin?.(principal) }
}
