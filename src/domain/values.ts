/*
 * Conversions between the wire forms of field values and their stored forms.
 * Dates are stored as epoch milliseconds and accepted as `/Date(ms)/`, ISO
 * 8601 text or a number; written as `/Date(ms)/` in JSON (ISO 8601 in JSON
 * answers that ask for it) and ISO 8601 in XML (OutDate carries the instant
 * until the serializer picks the form).
 */

export class OutDate {
  constructor(readonly ms: number) {}
  toJSON(): string {
    return `/Date(${this.ms})/`
  }
  toISOString(): string {
    return new Date(this.ms).toISOString()
  }
}

/**
 * A JSON.stringify replacer that writes each OutDate as ISO 8601 text instead of `/Date(ms)/`, for the JSON
 * answers that ask for it (http/jsonDates.ts). JSON.stringify hands a replacer the value after its toJSON, so the
 * OutDate is read from the holder.
 */
export function isoDatesReplacer(this: unknown, key: string, written: unknown): unknown {
  const original = (this as Record<string, unknown>)[key]
  return original instanceof OutDate ? original.toISOString() : written
}

const MS_DATE = /^\/Date\((-?\d+)(?:[+-]\d{4})?\)\/$/
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?(?:Z|[+-]\d{2}:?\d{2})?$/
/** The calendar and clock parts of an ISO_DATE text: year, month, day, and hour, minute, second when given. */
const ISO_PARTS = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?/

/** The most a JavaScript Date holds either side of 1970 (ECMA-262 §21.4.1.1): a later instant has no ISO 8601 form. */
const MAX_DATE_MS = 8.64e15

function withinDateRange(ms: number): number | undefined {
  return Math.abs(ms) <= MAX_DATE_MS ? ms : undefined
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

/**
 * Whether an ISO 8601 text has the form of a date but names a day or time that does not exist (2026-02-30,
 * month 13, 25:00): Date.parse would carry such a day over into the next month instead of refusing it.
 */
export function isImpossibleIsoDate(value: unknown): boolean {
  if (typeof value !== 'string') return false
  const text = value.trim()
  return ISO_DATE.test(text) && namesNoSuchDay(text)
}

/** The day-and-time check of isImpossibleIsoDate, for a text already known to match ISO_DATE. */
function namesNoSuchDay(text: string): boolean {
  const parts = ISO_PARTS.exec(text)
  if (parts === null) return false
  const part = (index: number): number => Number(parts[index] ?? 0)
  const [year, month, day, hour, minute, second] = [part(1), part(2), part(3), part(4), part(5), part(6)]
  return month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59
}

/** Parses a date in any accepted form to epoch ms; undefined when it is not a date (or not one a Date can hold, or a day that does not exist). */
export function parseDate(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? withinDateRange(Math.trunc(value)) : undefined
  if (typeof value !== 'string') return undefined
  const text = value.trim()
  const ms = MS_DATE.exec(text)
  if (ms !== null) return withinDateRange(Number(ms[1]))
  if (!ISO_DATE.test(text) || namesNoSuchDay(text)) return undefined
  const hasZone = /(?:Z|[+-]\d{2}:?\d{2})$/.test(text) && text.length > 10
  const parsed = Date.parse(hasZone || text.length === 10 ? text : `${text.replace(' ', 'T')}Z`)
  return Number.isNaN(parsed) ? undefined : parsed
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * The longest e-mail address (RFC 5321's path limit less its brackets): the most a User's e-mail holds, and the most
 * any e-mail a request names may have before it is looked up (it is a key of the global e-mail index).
 */
export const EMAIL_MAX_LENGTH = 254

/** The form every e-mail is kept and looked up in: trimmed, lower case (a User's, the global e-mail index's keys, a login). */
export function normalEmail(address: string): string {
  return address.trim().toLowerCase()
}

/**
 * Whether an e-mail can be a key of the global e-mail index: not empty, and no longer than a User's may be: a longer
 * one is never looked up (it would be a key over LMDB's size limit, or PostgreSQL's index row limit).
 */
export function indexableEmail(address: string): boolean {
  return address !== '' && address.length <= EMAIL_MAX_LENGTH
}

export function isEmail(text: string): boolean {
  return text.length <= EMAIL_MAX_LENGTH && EMAIL.test(text)
}
