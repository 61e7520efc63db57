/*
 * The cell values of the time-tracking tools' CSV exports, read strictly:
 * a value that is not in one of the forms below is refused (ImportValueError,
 * which interpretRow.ts turns into a 400 naming the line and the column),
 * never guessed at.
 *
 *   dates      `2024-07-01` always; other orders by `date_format` (the
 *              tools write the order their user chose). Without it a date
 *              with dots is day first (`01.07.2024`) and one with slashes
 *              or dashes month first (`07/01/2024`, the tools' default).
 *              Day and month may have one digit.
 *   times      `9:05`, `09:05:30`, `9:05 AM`, `9:05:30 pm` (12 AM is
 *              midnight, 12 PM noon); fractions of a second are cut.
 *   durations  `1:30:00`, `1:30` (hours and minutes), or a plain number
 *              in `duration_unit` (hours by default): `1.5` or `1,5`
 *              (either decimal separator; no thousands separator).
 *   booleans   yes/no, true/false, y/n, 1/0, in any case; empty is false
 *              (Kimai writes a false flag as nothing).
 *   date-times `2024-07-01T09:00:00+02:00` (an offset or `Z`: that instant),
 *              `2024-07-01T09:00`, or a date and a time separated by a
 *              space (local time of the import's time zone).
 */

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
const MINUTE_MS = 60_000
const SECOND_MS = 1000
/** The longest duration a cell may give: a year. */
const MAX_IMPORT_DURATION_MS = 366 * DAY_MS

/** A cell that does not hold what its column must. */
export class ImportValueError extends Error {}

/** The orders a date may be written in (`date_format`). */
export const DATE_FORMATS = ['YYYY-MM-DD', 'MM/DD/YYYY', 'DD/MM/YYYY', 'DD.MM.YYYY', 'MM-DD-YYYY', 'DD-MM-YYYY', 'YYYY/MM/DD', 'MM.DD.YYYY'] as const
export type DateFormat = (typeof DATE_FORMATS)[number]

/** What a number without a colon in a duration column counts (`duration_unit`). */
export const DURATION_UNITS = { hours: HOUR_MS, minutes: MINUTE_MS, seconds: SECOND_MS } as const
export type DurationUnit = keyof typeof DURATION_UNITS

const ISO_DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/

interface DateShape {
  readonly pattern: RegExp
  /** Which capture group holds the year, the month and the day. */
  readonly year: number
  readonly month: number
  readonly day: number
}

const SHAPES: Record<DateFormat, DateShape> = {
  'YYYY-MM-DD': { pattern: ISO_DATE, year: 1, month: 2, day: 3 },
  'YYYY/MM/DD': { pattern: /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/, year: 1, month: 2, day: 3 },
  'MM/DD/YYYY': { pattern: /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/, year: 3, month: 1, day: 2 },
  'DD/MM/YYYY': { pattern: /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/, year: 3, month: 2, day: 1 },
  'DD.MM.YYYY': { pattern: /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/, year: 3, month: 2, day: 1 },
  'MM.DD.YYYY': { pattern: /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/, year: 3, month: 1, day: 2 },
  'MM-DD-YYYY': { pattern: /^(\d{1,2})-(\d{1,2})-(\d{4})$/, year: 3, month: 1, day: 2 },
  'DD-MM-YYYY': { pattern: /^(\d{1,2})-(\d{1,2})-(\d{4})$/, year: 3, month: 2, day: 1 },
}

/** The format a date without `date_format` is read in, by its separators. */
function shapeByLook(text: string): DateShape | undefined {
  if (ISO_DATE.test(text)) return SHAPES['YYYY-MM-DD']
  if (/^\d{4}\//.test(text)) return SHAPES['YYYY/MM/DD']
  if (text.includes('.')) return SHAPES['DD.MM.YYYY']
  if (text.includes('/')) return SHAPES['MM/DD/YYYY']
  if (text.includes('-')) return SHAPES['MM-DD-YYYY']
  return undefined
}

/** A calendar date as days since 1970-01-01. */
export function parseDate(text: string, format: DateFormat | null): number {
  const trimmed = text.trim()
  // An ISO date is never ambiguous: it is read as such whatever the format says.
  const shape = ISO_DATE.test(trimmed) ? SHAPES['YYYY-MM-DD'] : format === null ? shapeByLook(trimmed) : SHAPES[format]
  const match = shape === undefined ? null : shape.pattern.exec(trimmed)
  if (shape === undefined || match === null) {
    throw new ImportValueError(`'${clip(text)}' is not a date${format === null ? ' (2024-07-01, 07/01/2024 or 01.07.2024; date_format names another order)' : ` in the form ${format}`}`)
  }
  const year = Number(match[shape.year])
  const month = Number(match[shape.month])
  const day = Number(match[shape.day])
  const ms = Date.UTC(year, month - 1, day)
  const date = new Date(ms)
  if (year < 1900 || date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    throw new ImportValueError(`'${clip(text)}' is no date of the calendar${format === null ? '' : ` (read as ${format})`}`)
  }
  return ms / DAY_MS
}

const TIME = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(?:\s*([AaPp])\.?[Mm]\.?)?$/

/** A time of day as milliseconds since midnight. */
export function parseTime(text: string): number {
  const match = TIME.exec(text.trim())
  if (match === null) throw new ImportValueError(`'${clip(text)}' is not a time of day (13:05, 13:05:30 or 1:05 PM)`)
  let hours = Number(match[1])
  const minutes = Number(match[2])
  const seconds = match[3] === undefined ? 0 : Number(match[3])
  const meridiem = match[4]?.toUpperCase()
  if (meridiem !== undefined) {
    if (hours < 1 || hours > 12) throw new ImportValueError(`'${clip(text)}': a 12-hour clock has hours 1 to 12`)
    hours = (hours % 12) + (meridiem === 'P' ? 12 : 0)
  }
  if (hours > 23 || minutes > 59 || seconds > 59) throw new ImportValueError(`'${clip(text)}' is no time of day`)
  return hours * HOUR_MS + minutes * MINUTE_MS + seconds * SECOND_MS
}

const CLOCK_DURATION = /^(\d{1,5}):(\d{2})(?::(\d{2}))?$/
const DECIMAL = /^\d{1,9}(?:[.,]\d{1,9})?$/

/** A duration in milliseconds: `h:mm[:ss]`, or a plain number counting `unit`. */
export function parseDuration(text: string, unit: DurationUnit): number {
  const trimmed = text.trim()
  const clock = CLOCK_DURATION.exec(trimmed)
  let ms: number
  if (clock !== null) {
    const minutes = Number(clock[2])
    const seconds = clock[3] === undefined ? 0 : Number(clock[3])
    if (minutes > 59 || seconds > 59) throw new ImportValueError(`'${clip(text)}' is no duration: minutes and seconds go up to 59`)
    ms = Number(clock[1]) * HOUR_MS + minutes * MINUTE_MS + seconds * SECOND_MS
  } else if (DECIMAL.test(trimmed)) {
    ms = Math.round(Number(trimmed.replace(',', '.')) * DURATION_UNITS[unit])
  } else {
    throw new ImportValueError(`'${clip(text)}' is not a duration (1:30:00, 1:30, or a number of ${unit} such as 1.5)`)
  }
  if (ms > MAX_IMPORT_DURATION_MS) throw new ImportValueError(`'${clip(text)}' is longer than a year`)
  return ms
}

const TRUE_WORDS = new Set(['yes', 'true', 'y', '1'])
const FALSE_WORDS = new Set(['no', 'false', 'n', '0', ''])

export function parseBoolean(text: string): boolean {
  const word = text.trim().toLowerCase()
  if (TRUE_WORDS.has(word)) return true
  if (FALSE_WORDS.has(word)) return false
  throw new ImportValueError(`'${clip(text)}' is neither yes nor no (Yes, No, true, false, 1, 0)`)
}

const ISO_DATE_TIME = /^(\d{4}-\d{1,2}-\d{1,2})[T ](\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?$/

/** A date and time of one cell: `{day, timeMs}` local, or `{instant}` when the cell names its offset. */
export type DateTimeValue = { readonly instant: number } | { readonly day: number; readonly timeMs: number }

export function parseDateTime(text: string, format: DateFormat | null): DateTimeValue {
  const trimmed = text.trim()
  const iso = ISO_DATE_TIME.exec(trimmed)
  if (iso !== null) {
    const day = parseDate(iso[1] as string, null)
    const timeMs = parseTime((iso[2] as string).replace(/\.\d+$/, ''))
    const zone = iso[3]
    if (zone === undefined) return { day, timeMs }
    return { instant: day * DAY_MS + timeMs - offsetMs(zone) }
  }
  const space = trimmed.indexOf(' ')
  if (space > 0) return { day: parseDate(trimmed.slice(0, space), format), timeMs: parseTime(trimmed.slice(space + 1)) }
  throw new ImportValueError(`'${clip(text)}' is not a date and time (2024-07-01T09:00:00+02:00, or a date and a time)`)
}

function offsetMs(zone: string): number {
  if (zone === 'Z') return 0
  const digits = zone.replace(':', '')
  const sign = digits.startsWith('-') ? -1 : 1
  return sign * (Number(digits.slice(1, 3)) * HOUR_MS + Number(digits.slice(3, 5)) * MINUTE_MS)
}

/** A cell's text as a message quotes it: at most 40 characters, on one line. */
function clip(text: string): string {
  const line = text.replace(/[\r\n\t]+/g, ' ')
  return line.length > 40 ? `${line.slice(0, 40)}…` : line
}
