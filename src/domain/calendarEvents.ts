/*
 * A user's time records as calendar events (the feed `GET
 * users/@self/calendar.ics`): the records of the caller — their own only,
 * whoever they are, and of those only what a GET would show them (not in
 * the trash, not of another user's personal project) — whose start lies in
 * a window of local days of the user's time zone (the user's `timeZone`,
 * else the account's), both days included: by default the last
 * DEFAULT_DAYS_BEFORE days and the next DEFAULT_DAYS_AFTER (`to` defaults to
 * today + DEFAULT_DAYS_AFTER, or `from` when that is later; `from` to the
 * same length of window before `to`), at most
 * MAX_CALENDAR_WINDOW_DAYS days and MAX_CALENDAR_EVENTS events (412 TL01-9002
 * past it: ask for a shorter window).
 *
 * An event carries what a calendar application needs to keep it current:
 * the record's id (a stable UID), its version (SEQUENCE counts changes from
 * 0) and updatedAt (LAST-MODIFIED); start and end (stop, else start +
 * duration; a record without either has no end); a summary from the
 * project, task and the description's first line; a description with the
 * whole text, the client (the record's, else its project's), the project
 * and the task; the tags as categories. Records
 * without a start cannot be placed and are left out.
 *
 * Read as steps (a pause every STEP_RECORDS records of the user), so a user
 * with years of records never holds the other tenants for long.
 */
import type { Caller } from './caller.js'
import { accountOf } from './account.js'
import { localDay, parseDay } from './calendar.js'
import { ApiError, wrongParameter } from './errors.js'
import { startOfLocalDay } from './localTime.js'
import { canSee } from './policy.js'
import { resourceByType } from './resources/index.js'
import type { Rec } from './schema.js'
import type { StateView } from './tx.js'

export const DEFAULT_DAYS_BEFORE = 30
export const DEFAULT_DAYS_AFTER = 7
export const MAX_CALENDAR_WINDOW_DAYS = 366
export const MAX_CALENDAR_EVENTS = 10_000
const STEP_RECORDS = 1000

/** Local days, both included, as the query named them (`from`, `to`: yyyy-MM-dd), or null for the default. */
export interface WindowRequest {
  readonly from: string | null
  readonly to: string | null
}

interface CalendarEvent {
  readonly id: string
  readonly version: number
  readonly updatedAt: number
  readonly createdAt: number
  readonly start: number
  readonly end: number | null
  readonly summary: string
  readonly description: string
  readonly categories: readonly string[]
}

export interface CalendarFeed {
  readonly timeZone: string
  /** The window's first and last local day (yyyy-MM-dd). */
  readonly from: string
  readonly to: string
  readonly userName: string
  readonly events: readonly CalendarEvent[]
}

function dayOf(name: string, text: string | null): number | null {
  if (text === null) return null
  const day = parseDay(text)
  if (day === undefined) throw wrongParameter(`${name} must be a date yyyy-MM-dd, got '${text.slice(0, 32)}'`)
  return day
}

function formatDay(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10)
}

/** The user's time zone: theirs, else the account's, else UTC. */
function userTimeZone(state: StateView, userId: string): string {
  const own = state.get('User', userId)?.timeZone
  if (typeof own === 'string' && own !== '') return own
  const account = accountOf(state).timeZone
  return typeof account === 'string' && account !== '' ? account : 'UTC'
}

function nameOf(state: StateView, type: string, id: unknown): string | null {
  if (typeof id !== 'string') return null
  const name = state.get(type, id)?.name
  return typeof name === 'string' && name.trim() !== '' ? name.trim() : null
}

function eventOf(state: StateView, rec: Rec, start: number): CalendarEvent {
  const project = nameOf(state, 'Project', rec.project)
  const task = nameOf(state, 'Task', rec.task)
  const client = nameOf(state, 'Client', rec.client ?? (typeof rec.project === 'string' ? state.get('Project', rec.project)?.client : null))
  const text = typeof rec.description === 'string' ? rec.description.trim() : ''
  const firstLine = text.split('\n', 1)[0]?.trim() ?? ''
  const where = [project, task].filter((part) => part !== null).join(' · ')
  const summary = where === '' ? firstLine || 'Time record' : firstLine === '' ? where : `${where}: ${firstLine}`
  const details = [text, client === null ? '' : `Client: ${client}`, project === null ? '' : `Project: ${project}`, task === null ? '' : `Task: ${task}`].filter((line) => line !== '')
  const stop = typeof rec.stop === 'number' ? rec.stop : typeof rec.duration === 'number' ? start + rec.duration : null
  const tags = Array.isArray(rec.tags) ? rec.tags.map((id) => nameOf(state, 'Tag', id)).filter((name): name is string => name !== null) : []
  return {
    id: rec.id,
    version: rec.version,
    updatedAt: rec.updatedAt,
    createdAt: rec.createdAt,
    start,
    end: stop !== null && stop >= start ? stop : null,
    summary,
    description: details.join('\n'),
    categories: tags,
  }
}

/** The caller's feed (see the top) for the window asked for, `nowMs` deciding the default one. */
export function* calendarFeedSteps(state: StateView, caller: Caller, asked: WindowRequest, nowMs: number): Generator<void, CalendarFeed, void> {
  const timeZone = userTimeZone(state, caller.userId)
  const today = localDay(nowMs, timeZone)
  const fromAsked = dayOf('from', asked.from)
  const toDay = dayOf('to', asked.to) ?? Math.max(today + DEFAULT_DAYS_AFTER, fromAsked ?? today)
  const fromDay = fromAsked ?? toDay - DEFAULT_DAYS_AFTER - DEFAULT_DAYS_BEFORE
  if (toDay < fromDay) throw wrongParameter('to is before from')
  if (toDay - fromDay + 1 > MAX_CALENDAR_WINDOW_DAYS) throw wrongParameter(`a calendar window has at most ${MAX_CALENDAR_WINDOW_DAYS} days; this one has ${toDay - fromDay + 1}`)
  const fromMs = startOfLocalDay(fromDay, timeZone)
  const toMs = startOfLocalDay(toDay + 1, timeZone)
  const decl = resourceByType('TimeRecord')
  const events: CalendarEvent[] = []
  let visited = 0
  for (const rec of state.collection(decl.type).lookup('user', caller.userId)) {
    visited += 1
    if (visited % STEP_RECORDS === 0) yield
    const start = rec.start
    if (typeof start !== 'number' || start < fromMs || start >= toMs || rec.trashItem !== null || !canSee(caller, decl, rec, state)) continue
    if (events.length === MAX_CALENDAR_EVENTS) {
      throw new ApiError('TL01-9002', `a calendar feed holds at most ${MAX_CALENDAR_EVENTS} events; this window has more: ask for a shorter one (from, to)`)
    }
    events.push(eventOf(state, rec, start))
  }
  events.sort((a, b) => a.start - b.start || (a.id < b.id ? -1 : 1))
  const user = state.get('User', caller.userId)
  const userName = [user?.firstName, user?.lastName].filter((part) => typeof part === 'string' && part !== '').join(' ')
  return { timeZone, from: formatDay(fromDay), to: formatDay(toDay), userName, events }
}
