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
 * changes the answer. Candidates are rows: the predicate reads their
 * columns (rowScan.ts), the sort compares keys read from columns, and
 * records are made of the page alone. A count or a summary of every row
 * (no index narrows it) tests them a block at a time in loops over the
 * columns (blockScan.ts), the same tests in the same order of rows.
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
import { seesEveryRecord, visibilityFieldsOf, visibilityFor } from '../domain/policy.js'
import type { Rec, ResourceDecl } from '../domain/schema.js'
import type { Collection } from '../engine/collection.js'
import type { DateRange } from '../engine/dateBuckets.js'
import type { TenantState } from '../engine/tenantState.js'
import { stateBehind } from '../engine/stateBehind.js'
import type { TenantView } from '../domain/tx.js'
import { compiledFilter } from './compiledFilters.js'
import type { CompiledFilter } from './filterCompiler.js'
import { runNow, type Steps } from '../engine/steps.js'
import { countMatchingSteps, pageSteps, parsePaging, type Paging } from './listQuery.js'
import { PRIMARY_KEY } from './fieldPath.js'
import { parseOrderBy, type OrderKey } from './orderBy.js'
import { RowBinding } from './rowScan.js'
import { BLOCK_ROWS, eachBlockSteps, type BlockScan, type BlockVisit } from './blockScan.js'
import { CodeColumn } from '../engine/columns.js'

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
  run(state: TenantView, caller: Caller, scope: ListScope): Rec[]
  runSteps(state: TenantView, caller: Caller, scope: ListScope): Steps<Rec[]>
  count(state: TenantView, caller: Caller, scope: ListScope): number
  countSteps(state: TenantView, caller: Caller, scope: ListScope): Steps<number>
  /**
   * `visit` on every matching record, unsorted and unpaged (for summaries
   * and reports); with `bounds`, at least on every matching record inside
   * them.
   */
  eachMatching(state: TenantView, caller: Caller, scope: ListScope, visit: (rec: Rec) => void, bounds?: CandidateBounds): Steps<void>
  /**
   * eachMatching over rows, read through `binding` (rowScan.ts): a summary reads their columns, not records. The
   * rows come in blocks (`rows[0 … count - 1]`, valid during the call: blockScan.ts), in the candidates' order.
   */
  eachMatchingBlock(state: TenantView, caller: Caller, scope: ListScope, visit: (rows: Int32Array, count: number, binding: RowBinding) => void, bounds?: CandidateBounds): Steps<void>
}

/** Ranges of range-indexed fields (field name → range) that candidates may be limited to. */
export type CandidateBounds = ReadonlyMap<string, DateRange>

const NO_BOUNDS: CandidateBounds = new Map()

interface Candidates {
  rows: Iterable<number>
  /** The rows come already in $orderby order. */
  sorted: boolean
  /** The rows are every row of the collection (a block scan reads them: blockScan.ts). */
  every?: true
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
  /** How many rows the pin gives (an upper bound). */
  size: number
  rows: () => Iterable<number>
  /** The rows in the order of `$orderby=<orderField>` (desc: `descending`), or null when the index does not keep that order. */
  ordered: (orderField: string, descending: boolean) => Iterable<number> | null
}

const NO_ORDER = () => null

/** The rows an `eq` on the field can give, read from the primary index or the field's index; null when no index answers it. */
function pinOf(collection: Collection, field: string, value: unknown): Pin | null {
  if (value === null || value === undefined) return null
  if (field === PRIMARY_KEY) {
    const row = typeof value === 'string' ? collection.rowOf(value) : -1
    return row < 0 ? { size: 0, rows: () => [], ordered: () => [] } : { size: 1, rows: () => [row], ordered: () => [row] }
  }
  if (!collection.hasIndex(field)) return null
  return {
    size: collection.countOf(field, value),
    rows: () => collection.lookupRows(field, value),
    ordered: (orderField, descending) => collection.orderedRows(field, value, orderField, descending),
  }
}

/** The rows an `eq` on any of `values` can give, one value's after the other; null when no index answers it. */
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
    rows: function* () {
      for (const part of parts) yield* part.rows()
    },
    ordered: NO_ORDER,
  }
}

function candidates(
  state: TenantState,
  binding: RowBinding,
  scope: ListScope,
  filter: CompiledFilter | null,
  order: readonly OrderKey[],
  wanted = Number.POSITIVE_INFINITY,
  bounds: CandidateBounds = NO_BOUNDS,
): Candidates {
  const collection = binding.collection
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
  if (pinInOrder !== null) return { rows: pinInOrder, sorted: true }
  if (pin !== null && pinBeatsWalk(pin.size, collection.size, wanted)) return { rows: pin.rows(), sorted: false }

  const walkable = orderedField === null ? undefined : collection.rangeIndexes.get(orderedField)
  if (walkable !== undefined && first !== undefined) {
    const range = filter?.ranges.get(walkable.field) ?? { lowInclusive: true, highInclusive: true }
    return { rows: walkable.walkRows(range, first.descending, binding.comparator(order, state)), sorted: true }
  }
  let best: Candidates | null = pin === null ? null : { rows: pin.rows(), sorted: false }
  let bestSize = pin?.size ?? collection.size
  for (const [field, range] of [...(filter?.ranges ?? []), ...bounds]) {
    const buckets = collection.rangeIndexes.get(field)
    if (buckets === undefined) continue
    const size = buckets.estimate(range)
    if (size < bestSize) {
      best = { rows: buckets.walkRows(range, false), sorted: false }
      bestSize = size
    }
  }
  return best ?? { rows: collection.rows(), sorted: false, every: true }
}

/** A child names its parent in `via`: the reference itself, or one of a list of references (a tag's time records). */
export function isChildOf(via: unknown, parentId: string): boolean {
  return via === parentId || (Array.isArray(via) && via.includes(parentId))
}

/** Whether a row is in the list: as a test of one row (`accepts`), and as the same test of a block scan (blockScan.ts). */
interface RowScope {
  accepts: (row: number) => boolean
  blocks: BlockScan
}

/**
 * Whether a row is in the list: first what its columns decide (trashed or not, the parent, the $filter: rowScan.ts),
 * then, for the rows that pass, what a record decides: a view's rule (the record made whole) and the caller's
 * visibility (handed the few fields it reads: policy.ts visibilityFieldsOf).
 */
function scopeOfRows(decl: ResourceDecl, state: TenantState, caller: Caller, scope: ListScope, filter: CompiledFilter | null, binding: RowBinding): RowScope {
  const trashed = scope.kind === 'trashed'
  const parent = parentLinkOf(scope)
  const collection = binding.collection
  const trash = collection.column('trashItem')
  const isTrashed = trash instanceof CodeColumn ? (row: number) => trash.code(row) !== 0 || trash.misfits?.has(row) === true : (row: number) => (trash?.get(row) ?? null) !== null
  const via = parent === undefined ? undefined : collection.column(parent.via)
  const bound = filter === null ? null : filter.bindRows(binding)
  const test = bound === null ? null : bound.test
  const parts = bound === null ? [] : bound.parts
  const ofParent = parent === undefined ? null : (row: number) => isChildOf(via?.get(row) ?? null, parent.parentId)
  if (scope.kind !== 'view' && seesEveryRecord(caller, decl, state.personalProjects.byId)) {
    // The common case (an owner or admin, no personal projects): the columns decide alone.
    const blocks = { trashed, parts, context: state, rowTest: ofParent }
    if (ofParent !== null) return { accepts: (row) => isTrashed(row) === trashed && ofParent(row) && (test === null || test(row, state)), blocks }
    if (test === null) return { accepts: (row) => isTrashed(row) === trashed, blocks }
    return { accepts: (row) => isTrashed(row) === trashed && test(row, state), blocks }
  }
  const visible = visibilityFor(caller, decl, state, state.personalProjects.byId)
  const fields = visibilityFieldsOf(decl)
  const visibleRow = fields === null || scope.kind === 'view' ? null : visibilityOfRows(collection, fields, visible)
  /** What the columns do not decide: the parent, then the view's rule and the visibility. */
  const rest = (row: number): boolean => {
    if (ofParent !== null && !ofParent(row)) return false
    if (visibleRow !== null) return visibleRow(row)
    const rec = binding.record(row)
    if (scope.kind === 'view' && !scope.accepts(rec, state)) return false
    return visible(rec)
  }
  const accepts = (row: number): boolean => isTrashed(row) === trashed && (test === null || test(row, state)) && rest(row)
  return { accepts, blocks: { trashed, parts, context: state, rowTest: rest } }
}

/**
 * The caller's visibility of a row, from the few fields it reads (policy.ts visibilityFieldsOf). Those are
 * references as a rule (user, project): then the answer depends on their pool codes alone and is remembered per
 * pair of codes (50 users and 500 projects make at most 25,000 answers for a million time records).
 */
function visibilityOfRows(collection: Collection, fields: readonly string[], visible: (rec: Rec) => boolean): (row: number) => boolean {
  const columns = fields.map((name) => [name, collection.column(name)] as const)
  const partial = (row: number): Rec => {
    const values: Record<string, unknown> = {}
    for (const [name, column] of columns) values[name] = column === undefined ? undefined : column.get(row)
    return values as Rec
  }
  const codes = columns.map(([, column]) => column)
  if (codes.length > 2 || !codes.every((column) => column instanceof CodeColumn)) return (row) => visible(partial(row))
  const [first, second] = codes as CodeColumn[]
  const base = collection.pool.texts.length + 1
  const answers = new Map<number, boolean>()
  return (row) => {
    if (first?.misfits !== null || (second !== undefined && second.misfits !== null)) return visible(partial(row))
    const key = (first as CodeColumn).code(row) * base + (second === undefined ? 0 : second.code(row))
    let answer = answers.get(key)
    if (answer === undefined) {
      answer = visible(partial(row))
      answers.set(key, answer)
    }
    return answer
  }
}

/**
 * `visit` on the selection of each block of the candidates that the scope accepts, as steps: every row of the
 * collection by blockScan.ts, other candidates a block of SCAN_STEP_RECORDS at a time (a module-level generator: see
 * routes/resources.ts on closures).
 */
function* eachAcceptedBlockSteps(collection: Collection, found: Candidates, scope: RowScope, visit: BlockVisit): Steps<void> {
  if (found.every === true) return yield* eachBlockSteps(collection, scope.blocks, visit)
  const accepts = scope.accepts
  const rows = new Int32Array(BLOCK_ROWS)
  let visited = 0
  let count = 0
  for (const row of found.rows) {
    if (accepts(row)) {
      rows[count] = row
      count += 1
    }
    if (++visited === BLOCK_ROWS) {
      if (count > 0) visit(rows, count)
      visited = 0
      count = 0
      yield
    }
  }
  if (count > 0) visit(rows, count)
}

function* countAcceptedSteps(collection: Collection, found: Candidates, scope: RowScope): Steps<number> {
  if (found.every !== true) return yield* countMatchingSteps(found.rows, scope.accepts)
  let matched = 0
  yield* eachBlockSteps(collection, scope.blocks, (_rows, count) => {
    matched += count
  })
  return matched
}

/** The page's records, made from its rows. */
function* recordsOfSteps(collection: Collection, rows: Steps<number[]>): Steps<Rec[]> {
  const page = yield* rows
  return page.map((row) => collection.record(row))
}

/** `maxPage`: the largest page, also the page without $top (MAX_PAGE_SIZE; an export's is larger). */
export function planList(decl: ResourceDecl, query: ReadonlyMap<string, string>, maxPage?: number): ListPlan {
  const filterText = query.get('$filter')
  const filter = filterText === undefined || filterText.trim() === '' ? null : compiledFilter(decl, filterText)
  const order: OrderKey[] = parseOrderBy(decl, query.get('$orderby'))
  const paging: Paging = parsePaging(query, maxPage)
  const runSteps = (view: TenantView, caller: Caller, scope: ListScope): Steps<Rec[]> => {
    const state = stateBehind(view)
    const binding = RowBinding.of(state.collection(decl.type))
    const found = candidates(state, binding, scope, filter, order, paging.skip + paging.top)
    const compare = found.sorted || order.length === 0 ? null : binding.comparator(order, state)
    return recordsOfSteps(binding.collection, pageSteps(found.rows, scopeOfRows(decl, state, caller, scope, filter, binding).accepts, compare, paging))
  }
  const countSteps = (view: TenantView, caller: Caller, scope: ListScope): Steps<number> => {
    const state = stateBehind(view)
    const binding = RowBinding.of(state.collection(decl.type))
    return countAcceptedSteps(binding.collection, candidates(state, binding, scope, filter, []), scopeOfRows(decl, state, caller, scope, filter, binding))
  }
  const eachMatchingBlock = (
    view: TenantView,
    caller: Caller,
    scope: ListScope,
    visit: (rows: Int32Array, count: number, binding: RowBinding) => void,
    bounds: CandidateBounds = NO_BOUNDS,
  ): Steps<void> => {
    const state = stateBehind(view)
    const binding = RowBinding.of(state.collection(decl.type))
    const found = candidates(state, binding, scope, filter, [], Number.POSITIVE_INFINITY, bounds)
    return eachAcceptedBlockSteps(binding.collection, found, scopeOfRows(decl, state, caller, scope, filter, binding), (rows, count) => visit(rows, count, binding))
  }
  return {
    runSteps,
    run: (state, caller, scope) => runNow(runSteps(state, caller, scope)),
    countSteps,
    count: (state, caller, scope) => runNow(countSteps(state, caller, scope)),
    eachMatching: (state, caller, scope, visit, bounds = NO_BOUNDS) =>
      eachMatchingBlock(
        state,
        caller,
        scope,
        (rows, count, binding) => {
          for (let at = 0; at < count; at += 1) visit(binding.record(rows[at] as number))
        },
        bounds,
      ),
    eachMatchingBlock,
  }
}
