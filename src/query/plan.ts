/*
 * The list planner. A list request becomes a plan: the compiled $filter,
 * the $orderby keys and the page. Running it picks the candidates:
 *
 *   - an inner collection reads its parent's index (`project` = id);
 *   - a filter that pins an indexed field with `eq` (`project/id eq '…'`,
 *     joined by `and` at the top) reads that index — the smallest one if
 *     several are pinned;
 *   - otherwise every record of the collection.
 *
 * Each candidate then passes the scope (live or trashed, view), visibility
 * and the full predicate, so an index only ever narrows the work, never
 * changes the answer.
 */
import { canSee, type Caller } from '../domain/policy.js'
import type { Rec, ResourceDecl } from '../domain/schema.js'
import type { TenantState } from '../engine/tenantState.js'
import { compileFilter, type CompiledFilter } from './filterCompiler.js'
import { countMatching, parsePaging, runList, type Paging } from './listQuery.js'
import { parseOrderBy, type OrderKey } from './orderBy.js'

export type ListScope =
  | { kind: 'all' }
  | { kind: 'trashed' }
  | { kind: 'children'; via: string; parentId: string }
  | { kind: 'view'; accepts: (rec: Rec, state: TenantState) => boolean }

export interface ListPlan {
  run(state: TenantState, caller: Caller, scope: ListScope): Rec[]
  count(state: TenantState, caller: Caller, scope: ListScope): number
  /** Every matching record, unsorted and unpaged (for summaries and reports). */
  matching(state: TenantState, caller: Caller, scope: ListScope): Iterable<Rec>
}

function candidates(decl: ResourceDecl, state: TenantState, scope: ListScope, filter: CompiledFilter | null): Iterable<Rec> {
  const collection = state.collection(decl.type)
  const pins: { field: string; value: unknown }[] = []
  if (scope.kind === 'children') pins.push({ field: scope.via, value: scope.parentId })
  if (filter !== null) for (const [field, value] of filter.equalities) if (collection.hasIndex(field)) pins.push({ field, value })
  if (pins.length === 0) return collection.values()
  let best = pins[0] as { field: string; value: unknown }
  for (const pin of pins) if (collection.countOf(pin.field, pin.value) < collection.countOf(best.field, best.value)) best = pin
  return collection.lookup(best.field, best.value)
}

function scopePredicate(decl: ResourceDecl, state: TenantState, caller: Caller, scope: ListScope, filter: CompiledFilter | null): (rec: Rec) => boolean {
  const trashed = scope.kind === 'trashed'
  return (rec) => {
    if ((rec.trashItem !== null) !== trashed) return false
    if (scope.kind === 'children' && rec[scope.via] !== scope.parentId) return false
    if (scope.kind === 'view' && !scope.accepts(rec, state)) return false
    if (!canSee(caller, decl, rec, state)) return false
    return filter === null || filter.test(rec, state)
  }
}

export function planList(decl: ResourceDecl, query: ReadonlyMap<string, string>): ListPlan {
  const filterText = query.get('$filter')
  const filter = filterText === undefined || filterText.trim() === '' ? null : compileFilter(decl, filterText)
  const order: OrderKey[] = parseOrderBy(decl, query.get('$orderby'))
  const paging: Paging = parsePaging(query)
  return {
    run: (state, caller, scope) => runList(candidates(decl, state, scope, filter), scopePredicate(decl, state, caller, scope, filter), order, paging, state),
    count: (state, caller, scope) => countMatching(candidates(decl, state, scope, filter), scopePredicate(decl, state, caller, scope, filter)),
    matching: function* (state, caller, scope) {
      const accepts = scopePredicate(decl, state, caller, scope, filter)
      for (const rec of candidates(decl, state, scope, filter)) if (accepts(rec)) yield rec
    },
  }
}
