/*
 * Views: `GET /{path}/@{name}` lists the records of a resource that a view
 * accepts, relative to the caller, with every query option of a list.
 * A view is a predicate prepared once per request (so a view that needs
 * the caller's memberships gathers them once); the list machinery does the
 * rest (trash, visibility, $filter, paging). A view whose records all have
 * one of a few values in one field (the caller's id as owner or user, the
 * ids of the caller's memberships) says so (`pin`), and the planner reads
 * those values' records from the field's index (or the primary map, for
 * `id`) instead of testing every record of the collection: `projects/@own`
 * reads the caller's projects, not all of them. `users/@self` and
 * `accounts/@own` are no views: they name one object (domain/selfAlias.ts).
 *
 * What the views beyond interface.md's mean (the original lists them
 * without a definition): `@editable` holds what the caller may change
 * (policy.ts, the same rule a write is checked by: superusers everything,
 * project managers every project and task, others the projects they own
 * and those projects' tasks); a task is `@trackable` when it is not done,
 * effective, and its project (if any) is trackable as `@trackable`
 * projects are (live, active, effective); a work type is `@linked` when a
 * live link ties it to a live project the caller sees.
 *
 * A few selections the original addresses as operations are views too:
 * `time/timerecords/$unbilled` (and `time/expenses/$unbilled`) lists the
 * unbilled records (billable, not billed: pricing.ts) like any view, and
 * `$unbilledsummary` sums them up as
 * `summary` does (a view summary: its `summary` parameter defaults to the
 * count, time and money of the records).
 */
import { exceededAccessIds } from '../../domain/licenses.js'
import { mayChange, projectHiddenFrom } from '../../domain/policy.js'
import { isUnbilled } from '../../domain/pricing.js'
import { resourceByType } from '../../domain/resources/index.js'
import type { Rec } from '../../domain/schema.js'
import type { TenantView } from '../../domain/tx.js'
import type { ListScope, ParentLink, ScopePin } from '../../query/plan.js'
import type { Principal } from '../call.js'

export interface View {
  /** The view for this caller, worked out once per request. */
  prepare(state: TenantView, principal: Principal): PreparedView
}

interface PreparedView {
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
function liveValues(state: TenantView, type: string, field: string, value: string, pick: string): Set<string> {
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

/** A view of the records of `type` the caller may change. */
function editable(type: string): View {
  const decl = resourceByType(type)
  return { prepare: (state, principal) => ({ accepts: (rec) => mayChange(principal, decl, rec, state) }) }
}

/** A project time can be tracked on: live, active and effective. */
function trackableProject(rec: Rec): boolean {
  return rec.trashItem === null && rec.active === true && rec.effective === true
}

/** Tasks not done and effective, of no project or of a trackable one. */
const trackableTasks: View = {
  prepare: (state) => ({
    accepts: (rec) => {
      if (rec.done === true || rec.effective !== true) return false
      const project = typeof rec.project === 'string' ? state.get('Project', rec.project) : undefined
      return typeof rec.project !== 'string' || (project !== undefined && trackableProject(project))
    },
  }),
}

/** The work types a live link ties to a live project the caller sees. */
function linkedWorkTypes(state: TenantView, principal: Principal): Set<string> {
  const linked = new Set<string>()
  for (const link of state.collection('ProjectWorkTypeLink').values()) {
    if (link.trashItem !== null || typeof link.workType !== 'string' || typeof link.project !== 'string') continue
    const project = state.get('Project', link.project)
    if (project !== undefined && project.trashItem === null && !projectHiddenFrom(principal, project)) linked.add(link.workType)
  }
  return linked
}

const VIEWS = new Map<string, View>([
  ['Project:@own', callersIn('owner')],
  ['Project:@member', memberOf('ProjectMember', 'project')],
  ['Project:@trackable', { prepare: () => ({ accepts: trackableProject }) }],
  ['Project:@editable', editable('Project')],
  ['Task:@trackable', trackableTasks],
  ['Task:@editable', editable('Task')],
  ['WorkType:@linked', { prepare: (state, principal) => withIds(linkedWorkTypes(state, principal)) }],
  ['TimeRecord:$unbilled', { prepare: () => ({ accepts: isUnbilled }) }],
  ['Expense:$unbilled', { prepare: () => ({ accepts: isUnbilled }) }],
  ['Impulse:@stopwatch', callersIn('user', (rec) => rec.mode === 'STOPWATCH')],
  ['Impulse:@default', callersIn('user')],
  ['Department:@member', memberOf('DepartmentMember', 'department')],
  ['Access:@exceeded', { prepare: (state) => withIds(exceededAccessIds(state)) }],
])

export function findView(type: string, name: string): View | undefined {
  return VIEWS.get(`${type}:${name}`)
}

/** The names of the views of a resource type (`@own`, `$unbilled`), in registration order: the API description lists them. */
export function viewNamesOf(type: string): string[] {
  return [...VIEWS.keys()].filter((key) => key.startsWith(`${type}:`)).map((key) => key.slice(type.length + 1))
}

/** A summary of a view's records under a name of its own: the view, and the `summary` text used when the request gives none. */
export interface ViewSummary {
  view: View
  defaultSummary: string
}

const VIEW_SUMMARIES = new Map<string, ViewSummary>([
  ['TimeRecord:$unbilledsummary', { view: VIEWS.get('TimeRecord:$unbilled') as View, defaultSummary: 'count();sum(duration);sum(price)' }],
  ['Expense:$unbilledsummary', { view: VIEWS.get('Expense:$unbilled') as View, defaultSummary: 'count();sum(quantity);sum(total)' }],
])

export function findViewSummary(type: string, name: string): ViewSummary | undefined {
  return VIEW_SUMMARIES.get(`${type}:${name}`)
}

/** The names of the view summaries of a resource type (`$unbilledsummary`). */
export function viewSummaryNamesOf(type: string): string[] {
  return [...VIEW_SUMMARIES.keys()].filter((key) => key.startsWith(`${type}:`)).map((key) => key.slice(type.length + 1))
}

/**
 * What a list of the view reads for the caller: the view prepared on first use, its predicate and its pin;
 * `within` an inner collection (`users/{id}/projects/@own`), only the parent's children.
 */
export function viewScope(view: View, principal: Principal, within: ParentLink | null = null): ListScope {
  let prepared: PreparedView | undefined
  const prepare = (state: TenantView) => (prepared ??= view.prepare(state, principal))
  const scope: ListScope = { kind: 'view', accepts: (rec, state) => prepare(state).accepts(rec), pin: (state) => prepare(state).pin }
  return within === null ? scope : { ...scope, within }
}
