/*
 * Report totals and their live aggregates.
 *
 * Totals are sums kept exactly: counts and milliseconds as integers, money
 * in integer cents. The aggregate keeps the totals of each local day (in
 * the account's time zone; dayTotals.ts) overall, per project and per user,
 * updated by apply on every put and delete of a time record (a trashed
 * record counts as removed; restoring it adds it back). A report for a
 * period adds up the days it covers. When the account's time zone changes
 * the day cut changes, so the aggregate is rebuilt from the records on its
 * next use (unless there are none yet).
 *
 * A record counts as billable time only when `billable` is true (unset is
 * not billable, as for pricing); money is the sum of the stored prices.
 *
 * It also keeps the owner of every personal project: the time records of
 * another user's personal project are hidden from a caller (policy.ts), so
 * a report answers "what the caller sees" as the totals minus those
 * projects' own day totals (hiddenProjects), without walking all projects.
 *
 * A snapshot keeps the totals (`stored`): adding up a million time records
 * took two of the seven seconds of loading one. A load of such a snapshot
 * only counts the time records (`expectStored`) and then takes the stored
 * totals (`installSteps`) when they fit: their format (STORED_TOTALS_FORMAT,
 * raised whenever what a record adds changes), the account's time zone,
 * and as many records as were loaded, overall, by project and by user.
 * Otherwise they are rebuilt from the records. The stored form is
 * canonical (groups by key, days in order, empty groups left out), so the
 * same totals always store the same bytes.
 */
import type { Rec } from '../domain/schema.js'
import { localDay } from '../domain/calendar.js'
import { durationOf } from '../domain/pricing.js'
import type { Caller } from '../domain/caller.js'
import { projectHiddenFrom } from '../domain/policy.js'
import { assertionFailed } from '../assert.js'
import { DayTotals, daysOf, emptyTotals, NO_DAY, STORES_DAYS, type FrozenDays, type Totals } from './dayTotals.js'
import type { ColumnReader } from './columns.js'
import { runNow, type Steps } from './steps.js'
import type { PersonalProjects } from './personalProjects.js'
import { untrashedRowsSteps, type StateObserver } from './stateObserver.js'
import type { Collection } from './collection.js'

/** The group key of records whose grouping value is null, in the aggregates and on the query path alike. */
export const NULL_KEY = 'null'

/** A reference's value as a group key. */
export function groupKey(id: unknown): string {
  return typeof id === 'string' ? id : NULL_KEY
}

export function totalsOfRecord(record: Rec): Totals {
  const duration = durationOf(record) ?? 0
  return {
    count: 1,
    timeMs: duration,
    billableTimeMs: record.billable === true ? duration : 0,
    effectiveTimeMs: record.effective === false ? 0 : duration,
    moneyCents: typeof record.price === 'number' ? Math.round(record.price * 100) : 0,
  }
}

export function dayOfRecord(record: Rec, timeZone: string): number {
  return typeof record.start === 'number' ? localDay(record.start, timeZone) : NO_DAY
}

/** The fields of a time record the totals read (totalsOfRecord, dayOfRecord, the groups), read from a collection's columns: one object, filled again for each row. */
class TotalsFields {
  private static readonly NAMES = ['trashItem', 'start', 'stop', 'duration', 'billable', 'effective', 'price', 'project', 'user'] as const
  private readonly columns: (ColumnReader | undefined)[]
  private readonly fields: Record<string, unknown> = {}

  constructor(private readonly collection: Collection) {
    this.columns = TotalsFields.NAMES.map((name) => collection.column(name))
  }

  /** The record at `row` as the totals read it (valid until the next call); made whole when it has extras. */
  at(row: number): Rec {
    if (this.collection.table.hasExtras(row)) return this.collection.table.record(row)
    const { columns, fields } = this
    for (let at = 0; at < columns.length; at += 1) fields[TotalsFields.NAMES[at] as string] = columns[at]?.get(row)
    return fields as Rec
  }
}

/** What a run of time records adds to the totals (ReportAggregates.takeRows): per record its day, its totals and its groups, in order. */
class AddedRows {
  size = 0
  private readonly days: Float64Array
  private readonly sums: Float64Array
  readonly projects: string[] = []
  readonly users: string[] = []

  /** For a run of up to `rows` records (made per run: kept, the arrays of the longest run would stay with every tenant that replayed one). */
  constructor(rows: number) {
    this.days = new Float64Array(rows)
    this.sums = new Float64Array(rows * 5)
  }

  add(day: number, totals: Totals, project: string, user: string): void {
    const at = this.size
    const { sums } = this
    this.days[at] = day
    sums[at * 5] = totals.count
    sums[at * 5 + 1] = totals.timeMs
    sums[at * 5 + 2] = totals.billableTimeMs
    sums[at * 5 + 3] = totals.effectiveTimeMs
    sums[at * 5 + 4] = totals.moneyCents
    this.projects.push(project)
    this.users.push(user)
    this.size = at + 1
  }

  day(at: number): number {
    return this.days[at] as number
  }

  /** The totals of record `at`, in `into`. */
  totals(at: number, into: Totals): Totals {
    const { sums } = this
    into.count = sums[at * 5] as number
    into.timeMs = sums[at * 5 + 1] as number
    into.billableTimeMs = sums[at * 5 + 2] as number
    into.effectiveTimeMs = sums[at * 5 + 3] as number
    into.moneyCents = sums[at * 5 + 4] as number
    return into
  }
}

/** The positions [0, size) grouped by their key, groups in the order of their first position, positions in order. */
function groupsOf(keys: readonly string[], size: number): Map<string, number[]> {
  const groups = new Map<string, number[]>()
  for (let at = 0; at < size; at += 1) {
    const key = keys[at] as string
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [at])
    else group.push(at)
  }
  return groups
}

/** The meaning of stored totals: raise it when what a record adds to them changes (see the top). */
const STORED_TOTALS_FORMAT = 1
/** Stored groups read, and records added in a rebuild, between two pauses of installSteps (a few milliseconds each). */
const INSTALL_STEP_GROUPS = 4
const REBUILD_STEP_RECORDS = 1_000

/** What the aggregates read of the state they follow: its time records, and which projects are personal. */
export interface AggregatedState {
  collection(type: 'TimeRecord'): { readonly size: number; values(): IterableIterator<Rec> }
  readonly personalProjects: PersonalProjects
}

export class ReportAggregates implements StateObserver {
  overall = new DayTotals()
  readonly byProject = new Map<string, DayTotals>()
  readonly byUser = new Map<string, DayTotals>()
  private zone = 'UTC'
  private stale = false
  /** While a snapshot that keeps the totals loads: the time records it loaded that count (not trashed). */
  private heldRecords: number | null = null

  constructor(private readonly state: AggregatedState) {}

  /** The time zone the days are cut in (the account's). */
  get timeZone(): string {
    return this.zone
  }

  onChange(type: string, before: Rec | undefined, after: Rec | undefined): void {
    if (type === 'Account') {
      const zone = typeof after?.timeZone === 'string' ? after.timeZone : 'UTC'
      if (zone !== this.zone) {
        this.zone = zone
        // Nothing to cut anew without time records (an account given its zone before any work is recorded).
        if (this.state.collection('TimeRecord').size === 0) this.clearTotals()
        else this.stale = true
      }
      return
    }
    if (type !== 'TimeRecord') return
    if (this.heldRecords !== null) {
      if (before !== undefined || after === undefined) assertionFailed('a time record changed while a snapshot loaded')
      if (after.trashItem === null) this.heldRecords += 1
      return
    }
    if (this.stale) return
    if (before !== undefined) this.apply(before, -1)
    if (after !== undefined) this.apply(after, +1)
  }

  follows(type: string): boolean {
    return type === 'Account' || type === 'TimeRecord'
  }

  /**
   * Time records loaded as columns while a snapshot that keeps the totals loads (expectStored): the untrashed ones
   * count, as onChange would have counted them one by one; false (to be shown the records) otherwise.
   */
  *takeLoadedSteps(type: string, collection: Collection): Steps<boolean> {
    if (type !== 'TimeRecord' || this.heldRecords === null) return false
    let untrashed = 0
    yield* untrashedRowsSteps(collection, () => (untrashed += 1))
    this.heldRecords += untrashed
    return true
  }

  /**
   * Time records inserted by the log's replay, at the rows [from, to): added as onChange adds them, from the columns
   * (a record with extras is made whole), without making the records. Overall in row order; then per project and
   * per user a group at a time, each group's rows in row order: every day of every group gets the same additions in
   * the same order as one record at a time, and a group's days (a few pages) stay in the cache while its rows are
   * added, where a million records' pages, record by record, were a cache miss each (1.5–2 µs a record).
   */
  takeRows(type: string, collection: Collection, from: number, to: number): boolean {
    if (type !== 'TimeRecord' || this.heldRecords !== null) return false
    if (this.stale) return true
    const batch = new AddedRows(to - from)
    const view = new TotalsFields(collection)
    const totals = emptyTotals()
    for (let row = from; row < to; row += 1) {
      if (!collection.table.isLive(row)) continue
      const record = view.at(row)
      if (record.trashItem !== null) continue
      const day = dayOfRecord(record, this.zone)
      batch.add(day, totalsOfRecord(record), groupKey(record.project), groupKey(record.user))
    }
    for (let at = 0; at < batch.size; at += 1) this.overall.add(batch.day(at), batch.totals(at, totals))
    for (const [byKey, keys] of [
      [this.byProject, batch.projects],
      [this.byUser, batch.users],
    ] as const) {
      for (const [key, rows] of groupsOf(keys, batch.size)) {
        const days = daysOf(byKey, key)
        for (const at of rows) days.add(batch.day(at), batch.totals(at, totals))
      }
    }
    return true
  }

  reset(): void {
    this.clearTotals()
    this.heldRecords = null
  }

  /**
   * The totals as a snapshot keeps them, copied now (pages change in
   * place): a first part with their format and time zone, then one part
   * per group. Null while they wait for a rebuild (the time zone changed).
   */
  stored(): unknown[] | null {
    const frozen = this.frozenStored()
    if (frozen === null) return null
    const parts = [...frozen.parts]
    frozen.release()
    return parts
  }

  /**
   * The totals as `stored` gives them, frozen now and put together a part at a time as they are read (a snapshot
   * writer reads a part per event-loop turn while the tenant goes on: dayTotals.ts FrozenDays); `release` once
   * written. Null while they wait for a rebuild.
   */
  frozenStored(): { parts: Iterable<unknown>; release: () => void } | null {
    if (this.stale || !STORES_DAYS) return null
    const groups: { group: string; key: string | null; days: FrozenDays }[] = [{ group: 'overall', key: null, days: this.overall.frozen() }]
    for (const [group, byKey] of [
      ['project', this.byProject],
      ['user', this.byUser],
    ] as const) {
      for (const key of [...byKey.keys()].sort()) {
        const days = byKey.get(key) as DayTotals
        if (!days.isEmpty) groups.push({ group, key, days: days.frozen() })
      }
    }
    const zone = this.zone
    function* parts(): IterableIterator<unknown> {
      yield { format: STORED_TOTALS_FORMAT, timeZone: zone }
      for (const { group, key, days } of groups) yield { group, key, days: days.stored() }
    }
    return {
      parts: { [Symbol.iterator]: parts },
      release: () => {
        for (const { days } of groups) days.release()
      },
    }
  }

  /** Begins loading a snapshot that keeps the totals: the time records loaded until `install` are counted, not added. */
  expectStored(): void {
    this.heldRecords = 0
  }

  /**
   * Ends a load begun with expectStored, as steps (steps.ts) of at most
   * INSTALL_STEP_GROUPS groups or REBUILD_STEP_RECORDS records: the stored
   * `parts` become the totals when they fit the records loaded (see the
   * top), and true; otherwise the totals are rebuilt from the records, and
   * false. Read in one go, the totals of 500 projects and 50 users took
   * 36–490 ms (a page of days is a typed array of its own, and a million
   * time records' totals have some 10,000 of them).
   */
  *installSteps(parts: unknown): Steps<boolean> {
    const heldRecords = this.heldRecords
    if (heldRecords === null) assertionFailed('installSteps without expectStored')
    this.heldRecords = null
    this.clearTotals()
    if (yield* this.readStoredSteps(parts, heldRecords)) {
      this.stale = false
      return true
    }
    yield* this.rebuildSteps()
    return false
  }

  /** Reads stored totals into the (cleared) aggregate; false when they are not the totals of `heldRecords` records in this time zone. */
  private *readStoredSteps(parts: unknown, heldRecords: number): Steps<boolean> {
    if (!Array.isArray(parts)) return false
    const [head, ...groups] = parts as unknown[]
    const { format, timeZone } = (typeof head === 'object' && head !== null ? head : {}) as { format?: unknown; timeZone?: unknown }
    if (format !== STORED_TOTALS_FORMAT || timeZone !== this.zone) return false
    let overall: DayTotals | null = null
    const counted = { project: 0, user: 0 }
    for (const [index, part] of groups.entries()) {
      if (index > 0 && index % INSTALL_STEP_GROUPS === 0) yield
      const { group, key, days: stored } = (typeof part === 'object' && part !== null ? part : {}) as { group?: unknown; key?: unknown; days?: unknown }
      const days = DayTotals.fromStored(stored)
      if (days === null) return false
      if (group === 'overall' && key === null && overall === null) overall = days
      else if ((group === 'project' || group === 'user') && typeof key === 'string') {
        const byKey = group === 'project' ? this.byProject : this.byUser
        if (byKey.has(key)) return false
        byKey.set(key, days)
        counted[group] += days.size
      } else return false
    }
    if (overall === null || overall.size !== heldRecords || counted.project !== heldRecords || counted.user !== heldRecords) return false
    this.overall = overall
    return true
  }

  private rebuild(): void {
    runNow(this.rebuildSteps())
  }

  private *rebuildSteps(): Steps<void> {
    this.stale = false
    this.clearTotals()
    let added = 0
    for (const record of this.state.collection('TimeRecord').values()) {
      this.apply(record, +1)
      added += 1
      if (added % REBUILD_STEP_RECORDS === 0) yield
    }
  }

  private clearTotals(): void {
    this.overall.clear()
    this.byProject.clear()
    this.byUser.clear()
  }

  /** The aggregate, rebuilt first if the day cut changed. */
  current(): this {
    if (this.stale) this.rebuild()
    return this
  }

  /** Projects with time records that the caller may not see: other users' personal projects. */
  hiddenProjects(caller: Caller): string[] {
    const hidden: string[] = []
    for (const [projectId, project] of this.state.personalProjects.byId) {
      if (projectHiddenFrom(caller, project) && !(this.byProject.get(projectId)?.isEmpty ?? true)) hidden.push(projectId)
    }
    return hidden
  }

  private apply(record: Rec, sign: number): void {
    if (record.trashItem !== null) return
    const day = dayOfRecord(record, this.zone)
    const totals = totalsOfRecord(record)
    this.overall.add(day, totals, sign)
    daysOf(this.byProject, groupKey(record.project)).add(day, totals, sign)
    daysOf(this.byUser, groupKey(record.user)).add(day, totals, sign)
  }
}
