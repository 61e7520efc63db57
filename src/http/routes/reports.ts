/*
 * Reports over time records: readtotals, groupedtotals, singletotals,
 * trendedtotals and singleslices (interface.md, "Reports").
 *
 * Every report is answered from day totals per group, read from the live
 * aggregates or by a scan of the matching records (query/reportDays.ts
 * chooses); both feed the same summing here. An empty `summary=` is no
 * grouping. A report read runs in slices when it scans
 * (tenants/slicedRead.ts); the aggregates answer in its first.
 *
 * Each report is also a CSV or XLSX file (format=csv|xlsx, Accept: text/csv;
 * export/): a row per group, period or slice, the totals as columns, and a
 * period's first and last local day (`from`, `to`) where the rows are periods.
 */
import { ApiError, wrongParameter } from '../../domain/errors.js'
import type { Rec } from '../../domain/schema.js'
import { parseRangeSpec, periodOf, slicesOf, MAX_DEPTH, type Period, type RangeKind, type RangeSpec } from '../../domain/reportPeriod.js'
import { resourceByType } from '../../domain/resources/index.js'
import type { TenantView } from '../../domain/tx.js'
import type { Steps } from '../../domain/steps.js'
import { emptyTotals, type Totals, type TotalsByDay } from '../../domain/totals.js'
import { resolvePath } from '../../query/fieldPath.js'
import { planList, type CandidateBounds } from '../../query/plan.js'
import { reportDays } from '../../query/reportDays.js'
import { accountOf } from '../../domain/account.js'
import type { Call, Principal } from '../call.js'
import { dataResponse, type ApiResponse, type XmlNames } from '../response.js'
import { requireSession } from '../requireSession.js'
import { exportAnswer, exportOf } from '../export/exportAnswer.js'
import type { ExportFormat } from '../export/exportFormat.js'
import { plainTable, type PlainColumn } from '../export/plainTable.js'
import type { Cell } from '../export/table.js'
import { formatDay } from '../../domain/calendar.js'

const HOUR_MS = 3_600_000
/**
 * The range of a trend or slices request that names none: the year of range_from (today by default), as the
 * original answers a bare `singleslices` (12 slices, the current year by month) — not a 400 asking for a range.
 */
const DEFAULT_TREND_AND_SLICES_RANGE: RangeKind = 365
const DAY_MS = 86_400_000

interface TotalsOut {
  count: number
  time: number
  billableTime: number
  effectiveTime: number
  money: number
  averagePricePerHour: number
  averageTime: number
}

function totalsOut(totals: Totals): TotalsOut {
  const money = totals.moneyCents / 100
  return {
    count: totals.count,
    time: totals.timeMs,
    billableTime: totals.billableTimeMs,
    effectiveTime: totals.effectiveTimeMs,
    money,
    // Not rounded, as the original answers it (a money amount is rounded to cents; an average of them is not).
    averagePricePerHour: totals.timeMs > 0 ? money / (totals.timeMs / HOUR_MS) : 0,
    averageTime: totals.count > 0 ? Math.round(totals.timeMs / totals.count) : 0,
  }
}

/**
 * The `start` instants a report's periods can draw records from: local days
 * [fromDay, toDay) of the earliest and latest period, widened by a day on
 * each side (a zone is less than a day away from UTC). Null when a period
 * is unbounded (range 0): every record may count.
 */
function startBoundsOf(periods: readonly Period[]): CandidateBounds | null {
  let fromDay = Number.POSITIVE_INFINITY
  let toDay = Number.NEGATIVE_INFINITY
  for (const period of periods) {
    if (period.fromDay === null || period.toDay === null) return null
    fromDay = Math.min(fromDay, period.fromDay)
    toDay = Math.max(toDay, period.toDay)
  }
  if (!Number.isFinite(fromDay) || !Number.isFinite(toDay)) return null
  return new Map([['start', { low: (fromDay - 1) * DAY_MS, lowInclusive: true, high: (toDay + 1) * DAY_MS, highInclusive: false }]])
}

interface ReportInput {
  spec: RangeSpec
  /** The grouping field path; null: ungrouped (`*`). */
  groupBy: string | null
  weekStart: number
  days: ReadonlyMap<string, TotalsByDay>
  /** Display names of the group keys that are references (project/id → the project's name), when asked for (`named`). */
  names: Map<string, string>
  /** The account's time zone (of the periods' days). */
  timeZone: string
}

function groupNames(state: TenantView, groupBy: string | null, keys: Iterable<string>): Map<string, string> {
  const names = new Map<string, string>()
  const [first, second] = groupBy?.split('/') ?? []
  const refType = first === undefined ? undefined : resourceByType('TimeRecord').fieldsByName.get(first)?.ref
  if (refType === undefined || second !== 'id') return names
  for (const key of keys) names.set(key, state.displayNameOf(refType, key))
  return names
}

/** The account's first day of the week; 1 (Monday) for a value stored before weekStart was checked to be 1..7. */
function weekStartOf(account: Rec): number {
  const value = account.weekStart
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 7 ? value : 1
}

/**
 * `earlierPeriods`: how many periods before the defined one the report reads (trendedtotals' depth); `named`: look up
 * the display names of the groups (groupedtotals; 500 projects' names were a twentieth of a readtotals that shows none).
 */
/** How a report reads its input: grouped by `summary`, with earlier periods, with the groups named, and its range when the request names none. */
interface ReportReading {
  grouped: boolean
  earlierPeriods?: number
  named?: boolean
  defaultRange?: RangeKind
}

async function reportInput(call: Call, { grouped, earlierPeriods = 0, named = false, defaultRange = 0 }: ReportReading): Promise<ReportInput> {
  const { tenant, principal } = requireSession(call)
  const query = call.request.query
  // An absent or empty `summary` is no grouping.
  const groupBy = grouped ? query.get('summary')?.trim() || null : null
  if (!grouped && query.has('summary')) throw wrongParameter('this report is not groupable')
  if (groupBy !== null) resolvePath(resourceByType('TimeRecord'), groupBy.split('/'), groupBy, true)
  if (query.has('$filter')) planList(resourceByType('TimeRecord'), new Map([['$filter', query.get('$filter') ?? '']]))
  return tenant.readInSlices((state) => reportInputSteps(state, principal, query, groupBy, earlierPeriods, named, defaultRange))
}

/** The report's input read from the state, as steps (a module-level generator: see routes/resources.ts on closures). */
function* reportInputSteps(
  state: TenantView,
  principal: Principal,
  query: ReadonlyMap<string, string>,
  groupBy: string | null,
  earlierPeriods: number,
  named: boolean,
  defaultRange: RangeKind,
): Steps<ReportInput> {
  const account = accountOf(state)
  const timeZone = String(account.timeZone ?? 'UTC')
  const spec = parseRangeSpec(query, timeZone, Date.now(), defaultRange)
  const weekStart = weekStartOf(account)
  const days = yield* reportDays(state, principal, query.get('$filter'), groupBy, () => startBoundsOf(Array.from({ length: earlierPeriods + 1 }, (_, index) => periodOf(spec, weekStart, -index))))
  return { spec, groupBy, weekStart, days, names: named ? groupNames(state, groupBy, days.keys()) : new Map(), timeZone }
}

function totalsIn(days: TotalsByDay | undefined, period: Period): TotalsOut {
  return totalsOut(days?.sum(period.fromDay, period.toDay) ?? emptyTotals())
}

/** Totals of every group with records in the period, by key; `*` always present when ungrouped. */
function totalsByGroup(input: ReportInput): [string, TotalsOut][] {
  const period = periodOf(input.spec, input.weekStart)
  const entries: [string, TotalsOut][] = []
  for (const key of [...input.days.keys()].sort()) {
    const totals = totalsIn(input.days.get(key), period)
    if (totals.count > 0) entries.push([key, totals])
  }
  if (input.groupBy === null && entries.length === 0) entries.push(['*', totalsOut(emptyTotals())])
  return entries
}

/** The columns of totals in an export: TotalsOut's properties, in its order. */
const TOTALS_COLUMNS: readonly PlainColumn[] = Object.keys(totalsOut(emptyTotals())).map((header) => ({ header, kind: 'number' }))
const KEY_COLUMN: PlainColumn = { header: 'key', kind: 'text' }
const OFFSET_COLUMN: PlainColumn = { header: 'offset', kind: 'number' }
/** A period's first and last local day (YYYY-MM-DD), empty when unbounded. */
const PERIOD_COLUMNS: readonly PlainColumn[] = [
  { header: 'from', kind: 'text' },
  { header: 'to', kind: 'text' },
]

function periodCells(period: Period): Record<string, Cell> {
  return { from: period.fromDay === null ? null : formatDay(period.fromDay), to: period.toDay === null ? null : formatDay(period.toDay - 1) }
}

/** A report's answer: `out` as JSON or XML, or with `format` the export of `rows()` under `columns`. */
function reportAnswer(
  call: Call,
  format: ExportFormat | null,
  name: string,
  input: ReportInput,
  out: unknown,
  names: XmlNames,
  columns: readonly PlainColumn[],
  rows: () => Record<string, Cell>[],
): ApiResponse {
  if (format === null) return dataResponse(call.request, out, names)
  return exportAnswer(format, plainTable(name, input.timeZone, columns, rows()))
}

const REPORT_HANDLERS: Record<string, (call: Call, format: ExportFormat | null) => Promise<ApiResponse>> = {
  /** {key: totals}, `*` when ungrouped. */
  async readtotals(call, format) {
    const input = await reportInput(call, { grouped: true })
    const groups = totalsByGroup(input)
    return reportAnswer(call, format, 'readtotals', input, Object.fromEntries(groups), { root: 'totals' }, [KEY_COLUMN, ...TOTALS_COLUMNS], () => groups.map(([key, totals]) => ({ key, ...totals })))
  },
  /** [{key, displayName, totals}] sorted by key: readtotals with the groups named. */
  async groupedtotals(call, format) {
    const input = await reportInput(call, { grouped: true, named: true })
    const out = totalsByGroup(input).map(([key, totals]) => ({ key, displayName: input.names.get(key) ?? key, totals }))
    const columns = [KEY_COLUMN, { header: 'displayName', kind: 'text' } as const, ...TOTALS_COLUMNS]
    return reportAnswer(call, format, 'groupedtotals', input, out, { root: 'groups', item: 'group' }, columns, () =>
      out.map((group) => ({ key: group.key, displayName: group.displayName, ...group.totals })),
    )
  },
  async singletotals(call, format) {
    const input = await reportInput(call, { grouped: false })
    const period = periodOf(input.spec, input.weekStart)
    const totals = totalsIn(input.days.get('*'), period)
    return reportAnswer(call, format, 'singletotals', input, totals, { root: 'totals' }, [...PERIOD_COLUMNS, ...TOTALS_COLUMNS], () => [{ ...periodCells(period), ...totals }])
  },
  async trendedtotals(call, format) {
    const depthText = call.request.query.get('depth') ?? '1'
    if (!/^\d{1,4}$/.test(depthText) || Number(depthText) > MAX_DEPTH) throw wrongParameter(`depth must be an integer from 0 to ${MAX_DEPTH}`)
    const depth = Number(depthText)
    const input = await reportInput(call, { grouped: false, earlierPeriods: depth, defaultRange: DEFAULT_TREND_AND_SLICES_RANGE })
    if (input.spec.range === 0) throw wrongParameter('trendedtotals needs a range other than 0')
    const days = input.days.get('*')
    const periods = Array.from({ length: depth + 1 }, (_, index) => periodOf(input.spec, input.weekStart, -index))
    const out = periods.map((period) => totalsIn(days, period))
    return reportAnswer(call, format, 'trendedtotals', input, out, { root: 'trend', item: 'totals' }, [OFFSET_COLUMN, ...PERIOD_COLUMNS, ...TOTALS_COLUMNS], () =>
      periods.map((period, index) => ({ offset: -index, ...periodCells(period), ...(out[index] as TotalsOut) })),
    )
  },
  async singleslices(call, format) {
    const input = await reportInput(call, { grouped: false, defaultRange: DEFAULT_TREND_AND_SLICES_RANGE })
    const defaultSlice = input.spec.range === 365 ? 31 : 1
    const sliceText = call.request.query.get('slice_by') ?? String(defaultSlice)
    const sliceBy = Number(sliceText)
    const days = input.days.get('*')
    const slices = slicesOf(periodOf(input.spec, input.weekStart), sliceBy)
    const out = slices.map((slice, offset) => ({ offset, time: days?.sum(slice.fromDay, slice.toDay).timeMs ?? 0 }))
    const columns = [OFFSET_COLUMN, ...PERIOD_COLUMNS, { header: 'time', kind: 'number' } as const]
    return reportAnswer(call, format, 'singleslices', input, out, { root: 'slices', item: 'slice' }, columns, () =>
      out.map((slice, index) => ({ offset: slice.offset, ...periodCells(slices[index] as Period), time: slice.time })),
    )
  },
}

/** The reports by name: a Map, so a name from the path finds only a report (never `constructor` or another inherited name). */
const REPORTS = new Map(Object.entries(REPORT_HANDLERS))

/** The names of the reports (`time/reports/{name}`): the API description lists each. */
export function reportNames(): string[] {
  return [...REPORTS.keys()]
}

export async function report(call: Call, params: Record<string, string>): Promise<ApiResponse> {
  const handler = REPORTS.get(params.name ?? '')
  if (handler === undefined) throw new ApiError('TL01-9003', `no report '${params.name}'; reports: ${[...REPORTS.keys()].join(', ')}`)
  return handler(call, exportOf(call))
}
