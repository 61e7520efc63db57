/*
 * The day totals per group a report is computed from, read from one of two
 * sources — the choice of the report's plan. Without a $filter — or with
 * only `project/id eq '…'` or `user/id eq '…'` — and grouped by nothing,
 * project/id or user/id, the tenant's live aggregates answer (decided on
 * the text alone); otherwise the query engine picks the matching records
 * and they are cut into days the same way. Both give identical totals (a
 * differential test checks it). Personal projects of other users never
 * count: the scan skips their records (visibility); the aggregates path
 * takes their day totals away. The scan runs as steps, in slices
 * (tenants/slicedRead.ts); the aggregates answer at once. Grouped by a
 * list of references (`tags/id`), a record counts in each of its elements'
 * groups (in `null` without any), so groups may add up to more than the total.
 */
import { accountOf } from '../domain/account.js'
import type { Caller } from '../domain/caller.js'
import { resourceByType } from '../domain/resources/index.js'
import { DayTotals, daysOf, withoutDays } from '../engine/dayTotals.js'
import { dayOfRecord, groupKey, NULL_KEY, totalsOfRecord } from '../engine/reportTotals.js'
import type { Steps } from '../engine/steps.js'
import type { TenantState } from '../engine/tenantState.js'
import { stateBehind } from '../engine/stateBehind.js'
import type { TenantView } from '../domain/tx.js'
import { resolvePath } from './fieldPath.js'
import { planList, type CandidateBounds } from './plan.js'

const AGGREGATED_FILTER = /^\s*(project|user)\/id\s+eq\s+'([^']*)'\s*$/
const AGGREGATED_GROUPS = new Set(['project/id', 'user/id'])

/**
 * Day totals per group key, read by the query engine from the matching
 * records; with `bounds`, only the records of those `start` instants need to
 * be read (the planner takes them when they are the cheapest candidates).
 * As steps: a scan of a million records runs in slices (tenants/slicedRead.ts).
 */
function* scannedDays(state: TenantState, caller: Caller, query: ReadonlyMap<string, string>, groupBy: string | null, bounds: CandidateBounds | null): Steps<Map<string, DayTotals>> {
  const decl = resourceByType('TimeRecord')
  const group = groupBy === null ? null : resolvePath(decl, groupBy.split('/'), groupBy, true)
  const timeZone = String(accountOf(state).timeZone ?? 'UTC')
  const days = new Map<string, DayTotals>()
  const plan = planList(decl, query)
  yield* plan.eachMatching(
    state,
    caller,
    { kind: 'all' },
    (record) => {
      const raw = group === null ? '*' : group.get(record, state)
      if (group === null || !group.many) return daysOf(days, raw === null ? NULL_KEY : String(raw)).add(dayOfRecord(record, timeZone), totalsOfRecord(record))
      const [day, totals] = [dayOfRecord(record, timeZone), totalsOfRecord(record)]
      const elements = raw as readonly unknown[]
      if (elements.length === 0) daysOf(days, NULL_KEY).add(day, totals)
      for (const element of new Set(elements)) daysOf(days, element === null ? NULL_KEY : String(element)).add(day, totals)
    },
    bounds ?? undefined,
  )
  return days
}

/** Whether the live aggregates can answer a report with this $filter and grouping (decided on the text alone). */
function aggregatesAnswer(filter: string, groupBy: string | null): { pin: RegExpExecArray | null } | null {
  const pin = filter === '' ? null : AGGREGATED_FILTER.exec(filter)
  if (filter !== '' && pin === null) return null
  if (groupBy !== null && !AGGREGATED_GROUPS.has(groupBy)) return null
  if (pin !== null && groupBy !== null && `${pin[1]}/id` !== groupBy) return null
  return { pin }
}

/**
 * Day totals per group key from the live aggregates, or null when they
 * cannot answer this report. What the caller may not see — the records of
 * other users' personal projects — is taken away: per project that is
 * dropping the project; in total, subtracting its day totals; per user,
 * subtracting those projects' records, read through the project index.
 */
function aggregatedDays(state: TenantState, caller: Caller, query: ReadonlyMap<string, string>, groupBy: string | null): Map<string, DayTotals> | null {
  const answerable = aggregatesAnswer(query.get('$filter')?.trim() ?? '', groupBy)
  if (answerable === null) return null
  const aggregates = state.reports.current()
  const hidden = aggregates.hiddenProjects(caller)
  const pinnedDimension = answerable.pin?.[1] ?? null
  const pinnedId = answerable.pin?.[2] ?? null
  const dimension = (pinnedDimension ?? (groupBy === null ? null : groupBy.split('/')[0])) as 'project' | 'user' | null
  if (dimension === null)
    return new Map([
      [
        '*',
        hidden.length === 0
          ? aggregates.overall
          : withoutDays(
              aggregates.overall,
              hidden.map((id) => aggregates.byProject.get(id) ?? new DayTotals()),
            ),
      ],
    ])
  const byGroup = dimension === 'project' ? aggregates.byProject : aggregates.byUser
  const hiddenSet = new Set(dimension === 'project' ? hidden : [])
  const hiddenByUser = dimension === 'user' && hidden.length > 0 ? hiddenDaysByUser(state, hidden, aggregates.timeZone) : new Map<string, DayTotals>()
  // 'null' is the key of records without a project; no id equals it, so a pin never selects it.
  const candidates: Iterable<[string, DayTotals | undefined]> = pinnedId === null ? byGroup : pinnedId === NULL_KEY ? [] : [[pinnedId, byGroup.get(pinnedId)]]
  const out = new Map<string, DayTotals>()
  for (const [key, days] of candidates) {
    if (days === undefined || days.isEmpty || hiddenSet.has(key)) continue
    const removed = hiddenByUser.get(key)
    out.set(key, removed === undefined ? days : withoutDays(days, [removed]))
  }
  return groupBy === null ? new Map([['*', out.get(pinnedId ?? '') ?? new DayTotals()]]) : out
}

/** Day totals per user of the live time records of the given projects. */
function hiddenDaysByUser(state: TenantState, projectIds: readonly string[], timeZone: string): Map<string, DayTotals> {
  const byUser = new Map<string, DayTotals>()
  const records = state.collection('TimeRecord')
  for (const projectId of projectIds) {
    for (const record of records.lookup('project', projectId)) {
      if (record.trashItem !== null) continue
      daysOf(byUser, groupKey(record.user)).add(dayOfRecord(record, timeZone), totalsOfRecord(record))
    }
  }
  return byUser
}

/**
 * The day totals per group key of the report with this $filter (the text; undefined for none) and grouping, as
 * steps; `bounds` gives the `start` instants a scan needs to read (asked only when the report scans).
 */
export function* reportDays(view: TenantView, caller: Caller, filter: string | undefined, groupBy: string | null, bounds: () => CandidateBounds | null): Steps<Map<string, DayTotals>> {
  const state = stateBehind(view)
  const query = filter === undefined ? new Map<string, string>() : new Map([['$filter', filter]])
  return aggregatedDays(state, caller, query, groupBy) ?? (yield* scannedDays(state, caller, query, groupBy, bounds()))
}
