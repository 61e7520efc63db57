/*
 * Views: `GET /{path}/@{name}` lists the records of a resource that a view
 * accepts, relative to the caller, with every query option of a list.
 * A view is one predicate, prepared once per request (so a view that needs
 * the caller's memberships gathers them once); the list machinery does the
 * rest (trash, visibility, $filter, paging).
 */
import type { Rec } from '../../domain/schema.js'
import type { TenantState } from '../../engine/tenantState.js'
import type { Principal } from '../call.js'

export interface View {
  select(state: TenantState, principal: Principal): (rec: Rec) => boolean
}

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
  ['Project:@own', { select: (_state, principal) => (rec) => rec.owner === principal.userId }],
  ['Project:@member', memberOf('ProjectMember', 'project')],
  ['Project:@trackable', { select: () => (rec) => rec.active === true && rec.effective === true }],
  ['Impulse:@stopwatch', { select: (_state, principal) => (rec) => rec.user === principal.userId && rec.mode === 'STOPWATCH' }],
  ['Impulse:@default', { select: (_state, principal) => (rec) => rec.user === principal.userId }],
  ['Department:@member', memberOf('DepartmentMember', 'department')],
  ['User:@self', { select: (_state, principal) => (rec) => rec.id === principal.userId }],
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
