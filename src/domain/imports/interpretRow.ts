/*
 * One line of an import file read as a time record: who, on what, when and
 * how long, every cell checked (importValues.ts) and every refusal a 400
 * naming the line and the column. Nothing is looked up here: names stay
 * names, and the operation (operations/importTimeRecords.ts) finds or makes
 * what they name.
 *
 * When: the start is the `start` column, or the `date` column and the
 * `startTime` column (midnight without one: Harvest writes no times). The
 * end is the `end` column, or the `endTime` column on the `endDate` (the
 * start's date without one; an end time before the start time then means
 * the next day, as Kimai writes a record that passes midnight). Local
 * times are of the import's time zone (`time_zone`, or the account's); a
 * date-time with an offset is that instant. With an end, the record's
 * duration is end − start and a duration column is not read; without one,
 * the duration column gives the stop (start + duration); with neither the
 * record is open (a start only).
 */
import { wrongParameter, type ApiError } from '../errors.js'
import { instantOfLocalTime } from '../localTime.js'
import type { ColumnPlan, ImportField } from './importLayouts.js'
import { ImportValueError, parseBoolean, parseDate, parseDateTime, parseDuration, parseTime, type DateFormat, type DateTimeValue, type DurationUnit } from './importValues.js'

const DAY_MS = 86_400_000

/** How the cells are read: the options of the import that concern values. */
export interface ValueOptions {
  readonly timeZone: string
  readonly dateFormat: DateFormat | null
  readonly durationUnit: DurationUnit
  readonly tagSeparator: string
}

/** One line of the file: its number (the header is line 1) and its cells. */
export interface ImportLine {
  readonly line: number
  readonly cells: readonly string[]
}

export interface InterpretedRow {
  readonly line: number
  readonly email: string | null
  readonly firstName: string | null
  readonly lastName: string | null
  readonly client: string | null
  readonly project: string | null
  readonly task: string | null
  readonly description: string | null
  readonly billable: boolean | null
  readonly tags: readonly string[]
  /** Epoch ms. */
  readonly start: number
  readonly stop: number | null
  readonly duration: number | null
}

/** A 400 naming the line, and the column when there is one. */
export function refusedAt(line: number, header: string | null, message: string): ApiError {
  return wrongParameter(`line ${line}${header === null ? '' : `, column '${header}'`}: ${message}`)
}

export function interpretRow(input: ImportLine, plan: ColumnPlan, options: ValueOptions): InterpretedRow {
  const { line, cells } = input
  const headerOf = (field: ImportField) => plan.columns.get(field)?.header ?? field
  /** The cell of a field, trimmed; null when the file has no such column or the cell is empty. */
  const cell = (field: ImportField): string | null => {
    const column = plan.columns.get(field)
    const text = column === undefined ? undefined : cells[column.index]?.trim()
    return text === undefined || text === '' ? null : text
  }
  /** A field's value read by `parse`; a refusal names the line and column. */
  const read = <T>(field: ImportField, parse: (text: string) => T): T | null => {
    const text = cell(field)
    if (text === null) return null
    try {
      return parse(text)
    } catch (error) {
      if (error instanceof ImportValueError) throw refusedAt(line, headerOf(field), error.message)
      throw error
    }
  }
  const needed = <T>(field: ImportField, value: T | null): T => {
    if (value === null) throw refusedAt(line, headerOf(field), 'is empty')
    return value
  }
  const instantOf = (value: DateTimeValue): number => ('instant' in value ? value.instant : instantOfLocalTime(value.day * DAY_MS + value.timeMs, options.timeZone))

  let startLocal: DateTimeValue
  if (plan.columns.has('start'))
    startLocal = needed(
      'start',
      read('start', (text) => parseDateTime(text, options.dateFormat)),
    )
  else {
    const day = needed(
      'date',
      read('date', (text) => parseDate(text, options.dateFormat)),
    )
    const timeMs = plan.columns.has('startTime') ? needed('startTime', read('startTime', parseTime)) : 0
    startLocal = { day, timeMs }
  }
  const start = instantOf(startLocal)

  let stop: number | null = null
  const end = read('end', (text) => parseDateTime(text, options.dateFormat))
  if (end !== null) stop = instantOf(end)
  else {
    const endTime = read('endTime', parseTime)
    if (endTime !== null) {
      const endDay = read('endDate', (text) => parseDate(text, options.dateFormat))
      const startDay = 'day' in startLocal ? startLocal.day : Math.floor(startLocal.instant / DAY_MS)
      let day = endDay ?? startDay
      // A record passing midnight written with one date: the end is on the next day.
      if (endDay === null && 'timeMs' in startLocal && endTime < startLocal.timeMs) day += 1
      stop = instantOfLocalTime(day * DAY_MS + endTime, options.timeZone)
    }
  }
  let duration: number | null
  if (stop !== null) {
    if (stop < start) throw refusedAt(line, headerOf(plan.columns.has('end') ? 'end' : 'endTime'), 'the record ends before it starts')
    duration = stop - start
  } else {
    duration = read('duration', (text) => parseDuration(text, options.durationUnit))
    if (duration !== null) stop = start + duration
  }

  const tagsText = cell('tags')
  const tags = tagsText === null ? [] : distinctNames(tagsText.split(options.tagSeparator))
  const description = plan.columns.has('description') ? (cells[plan.columns.get('description')?.index as number] ?? '') : ''
  return {
    line,
    email: cell('email')?.toLowerCase() ?? null,
    firstName: cell('firstName'),
    lastName: cell('lastName'),
    client: cell('client'),
    project: cell('project'),
    task: cell('task'),
    description: description.trim() === '' ? null : description,
    billable: plan.columns.has('billable') ? (read('billable', parseBoolean) ?? false) : null,
    tags,
    start,
    stop,
    duration,
  }
}

/** Names without surrounding spaces, empty ones dropped, each once (compared without case). */
function distinctNames(names: readonly string[]): string[] {
  const seen = new Set<string>()
  const kept: string[] = []
  for (const raw of names) {
    const name = raw.trim()
    const key = name.toLowerCase()
    if (name === '' || seen.has(key)) continue
    seen.add(key)
    kept.push(name)
  }
  return kept
}
