/*
 * The list planner. A list request becomes a plan: the compiled $filter,
 * the $orderby keys and the page. Running it picks the candidates:
 *
 *   - an inner collection reads its parent's index (`project` = id);
 *   - a filter that pins an indexed field with `eq` (`project/id eq '…'`,
 *     joined by `and` at the top) reads that index, and `id eq '…'` reads
 *     the primary map (one record at most) — the smallest one if
 *     several are pinned. When the index keeps the pinned value's records
 *     in the order of the sort (a declaration's `indexOrder`, and
 *     `$orderby=start desc`), they are read in that order, so a page stops
 *     early; otherwise a pin wins over everything below unless it is so
 *     large that walking a sorted index to fill the page is cheaper;
 *   - a sort on one range-indexed date field (`$orderby=start desc`) walks
 *     that field's day buckets in order, so a page stops early;
 *   - a filter that bounds a range-indexed date field reads only those days;
 *   - otherwise every record of the collection.
 *
 * A trashed list or a view inside an inner collection (`within`: the
 * children of one parent) reads the parent's index like the inner
 * collection itself.
 *
 * Each candidate then passes the scope (live or trashed, view), visibility
 * and the full predicate, so an index only ever narrows the work, never
 * changes the answer.
 *
 * A caller that needs only part of the matching records (a report needs
 * the records of its periods) may hand `eachMatching` bounds on range-indexed
 * fields: they compete with the filter's own ranges for the cheapest
 * candidates and never reach the predicate, so records outside them may
 * still come (a day bucket is read whole) and the caller ignores those.
 *
 * Every way of running a plan is also steps (`runSteps`, `countSteps`,
 * `eachMatching`: they pause after every few hundred candidates), so a
 * long one runs in slices (tenants/slicedRead.ts). That is why an `eq null`
 * pin is no pin: its index holds no null, and the records without a value
 * would be found by a scan inside the iterator, where it cannot pause; the
 * scan of the collection with the predicate gives them, pausing.
 */
import type { Caller } from '../domain/caller.js'
import { visibilityFor } from '../domain/policy.js'
import type { Rec, ResourceDecl } from '../domain/schema.js'
import type { Collection } from '../engine/collection.js'
import type { DateRange } from '../engine/dateBuckets.js'
import type { TenantState } from '../engine/tenantState.js'
import { compiledFilter } from './compiledFilters.js'
import type { CompiledFilter } from './filterCompiler.js'
import { runNow, type Steps } from '../engine/steps.js'
import { countMatchingSteps, parsePaging, runListSteps, SCAN_STEP_RECORDS, type Paging } from './listQuery.js'
import { PRIMARY_KEY } from './fieldPath.js'
import { parseOrderBy, recordComparator, type OrderKey } from './orderBy.js'

/** Values of a field one of which every record of a scope has: the planner may read only those records (an index, or the primary map for `id`). */
export interface ScopePin {
  field: string
  values: readonly string[]
}

/** The records of an inner collection: those whose reference `via` is `parentId`. */
export interface ParentLink {
  via: string
  parentId: string
}

export type ListScope =
  | { kind: 'all' }
  | { kind: 'trashed'; within?: ParentLink }
  | ({ kind: 'children' } & ParentLink)
  | { kind: 'view'; accepts: (rec: Rec, state: TenantState) => boolean; pin: (state: TenantState) => ScopePin | undefined; within?: ParentLink }

/** The parent a scope's records all belong to, if any. */
function parentLinkOf(scope: ListScope): ParentLink | undefined {
  return scope.kind === 'children' ? scope : scope.kind === 'all' ? undefined : scope.within
}

export interface ListPlan {
  run(state: TenantState, caller: Caller, scope: ListScope): Rec[]
  runSteps(state: TenantState, caller: Caller, scope: ListScope): Steps<Rec[]>
  count(state: TenantState, caller: Caller, scope: ListScope): number
  countSteps(state: TenantState, caller: Caller, scope: ListScope): Steps<number>
  /**
   * `visit` on every matching record, unsorted and unpaged (for summaries
   * and reports); with `bounds`, at least on every matching record inside
   * them.
   */
  eachMatching(state: TenantState, caller: Caller, scope: ListScope, visit: (rec: Rec) => void, bounds?: CandidateBounds): Steps<void>
}

/** Ranges of range-indexed fields (field name → range) that candidates may be limited to. */
export type CandidateBounds = ReadonlyMap<string, DateRange>

const NO_BOUNDS: CandidateBounds = new Map()

interface Candidates {
  recs: Iterable<Rec>
  /** The records come already in $orderby order. */
  sorted: boolean
}

/**
 * Whether reading a pinned index (then sorting what it gives) is cheaper
 * than walking the sort field's range index until the page is full: the
 * walk visits about wanted × (collection size / pin size) records when the
 * pinned records are spread evenly over the sort order.
 */
function pinBeatsWalk(pinSize: number, collectionSize: number, wanted: number): boolean {
  return pinSize * pinSize <= wanted * collectionSize
}

interface Pin {
  /** How many records the pin gives (an upper bound). */
  size: number
  recs: () => Iterable<Rec>
  /** The records in the order of `$orderby=<orderField>` (desc: `descending`), or null when the index does not keep that order. */
  ordered: (orderField: string, descending: boolean) => Iterable<Rec> | null
}

const NO_ORDER = () => null

/** The records an `eq` on the field can give, read from the primary map or the field's index; null when no index answers it. */
function pinOf(collection: Collection, field: string, value: unknown): Pin | null {
  if (value === null || value === undefined) return null
  if (field === PRIMARY_KEY) {
    const rec = typeof value === 'string' ? collection.get(value) : undefined
    return rec === undefined ? { size: 0, recs: () => [], ordered: () => [] } : { size: 1, recs: () => [rec], ordered: () => [rec] }
  }
  if (!collection.hasIndex(field)) return null
  return {
    size: collection.countOf(field, value),
    recs: () => collection.lookup(field, value),
    ordered: (orderField, descending) => collection.orderedLookup(field, value, orderField, descending),
  }
}

/** The records an `eq` on any of `values` can give, one value's after the other; null when no index answers it. */
function pinOfAny(collection: Collection, field: string, values: readonly string[]): Pin | null {
  if (values.length === 1) return pinOf(collection, field, values[0])
  const parts: Pin[] = []
  for (const value of values) {
    const part = pinOf(collection, field, value)
    if (part === null) return null
    parts.push(part)
  }
  return {
    size: parts.reduce((sum, part) => sum + part.size, 0),
    recs: function* () {
      for (const part of parts) yield* part.recs()
    },
    ordered: NO_ORDER,
  }
}

function candidates(
  decl: ResourceDecl,
  state: TenantState,
  scope: ListScope,
  filter: CompiledFilter | null,
  order: readonly OrderKey[],
  wanted = Number.POSITIVE_INFINITY,
  bounds: CandidateBounds = NO_BOUNDS,
): Candidates {
  const collection = state.collection(decl.type)
  const pins: Pin[] = []
  const addPin = (found: Pin | null) => {
    if (found !== null) pins.push(found)
  }
  const parent = parentLinkOf(scope)
  if (parent !== undefined) addPin(pinOf(collection, parent.via, parent.parentId))
  const viewPin = scope.kind === 'view' ? scope.pin(state) : undefined
  if (viewPin !== undefined) addPin(pinOfAny(collection, viewPin.field, viewPin.values))
  if (filter !== null) for (const [field, value] of filter.equalities) addPin(pinOf(collection, field, value))
  let pin: Pin | null = null
  for (const candidate of pins) if (pin === null || candidate.size < pin.size) pin = candidate
  const first = order[0]
  const orderedField = order.length === 1 && first !== undefined && first.path.text === first.path.field.name ? first.path.field.name : null
  const pinInOrder = pin === null || orderedField === null || first === undefined ? null : pin.ordered(orderedField, first.descending)
  if (pinInOrder !== null) return { recs: pinInOrder, sorted: true }
  if (pin !== null && pinBeatsWalk(pin.size, collection.size, wanted)) return { recs: pin.recs(), sorted: false }

  const walkable = orderedField === null ? undefined : collection.rangeIndexes.get(orderedField)
  if (walkable !== undefined && first !== undefined) {
    const range = filter?.ranges.get(walkable.field) ?? { lowInclusive: true, highInclusive: true }
    return { recs: walkable.walk(range, first.descending, recordComparator(order, state)), sorted: true }
  }
  let best: Candidates | null = pin === null ? null : { recs: pin.recs(), sorted: false }
  let bestSize = pin?.size ?? collection.size
  for (const [field, range] of [...(filter?.ranges ?? []), ...bounds]) {
    const buckets = collection.rangeIndexes.get(field)
    if (buckets === undefined) continue
    const size = buckets.estimate(range)
    if (size < bestSize) {
      best = { recs: buckets.walk(range, false), sorted: false }
      bestSize = size
    }
  }
  return best ?? { recs: collection.values(), sorted: false }
}

/** A child names its parent in `via`: the reference itself, or one of a list of references (a tag's time records). */
export function isChildOf(via: unknown, parentId: string): boolean {
  return via === parentId || (Array.isArray(via) && via.includes(parentId))
}

function scopePredicate(decl: ResourceDecl, state: TenantState, caller: Caller, scope: ListScope, filter: CompiledFilter | null): (rec: Rec) => boolean {
  const trashed = scope.kind === 'trashed'
  const parent = parentLinkOf(scope)
  const visible = visibilityFor(caller, decl, state, state.personalProjects.byId)
  return (rec) => {
    if ((rec.trashItem !== null) !== trashed) return false
    if (parent !== undefined && !isChildOf(rec[parent.via], parent.parentId)) return false
    if (scope.kind === 'view' && !scope.accepts(rec, state)) return false
    if (!visible(rec)) return false
    return filter === null || filter.test(rec, state)
  }
}

/** `visit` on each of `recs` that `accepts`, as steps (a module-level generator: see routes/resources.ts on closures). */
function* eachAcceptedSteps(recs: Iterable<Rec>, accepts: (rec: Rec) => boolean, visit: (rec: Rec) => void): Steps<void> {
  let visited = 0
  for (const rec of recs) {
    if (++visited === SCAN_STEP_RECORDS) {
      visited = 0
      yield
    }
    if (accepts(rec)) visit(rec)
  }
}

/** `maxPage`: the largest page, also the page without $top (MAX_PAGE_SIZE; an export's is larger). */
export function planList(decl: ResourceDecl, query: ReadonlyMap<string, string>, maxPage?: number): ListPlan {
  const filterText = query.get('$filter')
  const filter = filterText === undefined || filterText.trim() === '' ? null : compiledFilter(decl, filterText)
  const order: OrderKey[] = parseOrderBy(decl, query.get('$orderby'))
  const paging: Paging = parsePaging(query, maxPage)
  const runSteps = (state: TenantState, caller: Caller, scope: ListScope): Steps<Rec[]> => {
    const found = candidates(decl, state, scope, filter, order, paging.skip + paging.top)
    return runListSteps(found.recs, scopePredicate(decl, state, caller, scope, filter), found.sorted ? [] : order, paging, state)
  }
  const countSteps = (state: TenantState, caller: Caller, scope: ListScope): Steps<number> =>
    countMatchingSteps(candidates(decl, state, scope, filter, []).recs, scopePredicate(decl, state, caller, scope, filter))
  return {
    runSteps,
    run: (state, caller, scope) => runNow(runSteps(state, caller, scope)),
    countSteps,
    count: (state, caller, scope) => runNow(countSteps(state, caller, scope)),
    eachMatching: (state, caller, scope, visit, bounds = NO_BOUNDS) =>
      eachAcceptedSteps(candidates(decl, state, scope, filter, [], Number.POSITIVE_INFINITY, bounds).recs, scopePredicate(decl, state, caller, scope, filter), visit),
  }
}
