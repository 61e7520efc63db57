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
 * next use.
 *
 * A record counts as billable time only when `billable` is true (unset is
 * not billable, as for pricing); money is the sum of the stored prices.
 *
 * It also keeps the owner of every personal project: the time records of
 * another user's personal project are hidden from a caller (policy.ts), so
 * a report answers "what the caller sees" as the totals minus those
 * projects' own day totals (hiddenProjects), without walking all projects.
 */
import type { Rec } from '../domain/schema.js'
import { localDay } from '../domain/calendar.js'
import { durationOf } from '../domain/pricing.js'
import { projectHiddenFrom, type Caller } from '../domain/policy.js'
import { DayTotals, daysOf, NO_DAY, type Totals } from './dayTotals.js'
import type { StateObserver, TenantState } from './tenantState.js'

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

export class ReportAggregates implements StateObserver {
  readonly overall = new DayTotals()
  readonly byProject = new Map<string, DayTotals>()
  readonly byUser = new Map<string, DayTotals>()
  private zone = 'UTC'
  private stale = false

  constructor(private readonly state: TenantState) {}

  /** The time zone the days are cut in (the account's). */
  get timeZone(): string {
    return this.zone
  }

  onChange(type: string, before: Rec | undefined, after: Rec | undefined): void {
    if (type === 'Account') {
      const zone = typeof after?.timeZone === 'string' ? after.timeZone : 'UTC'
      if (zone !== this.zone) {
        this.zone = zone
        this.stale = true
      }
      return
    }
    if (type !== 'TimeRecord' || this.stale) return
    if (before !== undefined) this.apply(before, -1)
    if (after !== undefined) this.apply(after, +1)
  }

  reset(): void {
    this.clearTotals()
  }

  private clearTotals(): void {
    this.overall.clear()
    this.byProject.clear()
    this.byUser.clear()
  }

  /** The aggregate, rebuilt first if the day cut changed. */
  current(): this {
    if (this.stale) {
      this.stale = false
      this.clearTotals()
      for (const record of this.state.collection('TimeRecord').values()) this.apply(record, +1)
    }
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
