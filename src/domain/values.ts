/*
 * Conversions between the wire forms of field values and their stored forms.
 * Dates are stored as epoch milliseconds and accepted as `/Date(ms)/`, ISO
 * 8601 text or a number; written as `/Date(ms)/` in JSON and ISO 8601 in XML
 * (OutDate carries the instant until the serializer picks the form).
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

const MS_DATE = /^\/Date\((-?\d+)(?:[+-]\d{4})?\)\/$/
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?(?:Z|[+-]\d{2}:?\d{2})?$/

/** The most a JavaScript Date holds either side of 1970 (ECMA-262 §21.4.1.1): a later instant has no ISO 8601 form. */
const MAX_DATE_MS = 8.64e15

function withinDateRange(ms: number): number | undefined {
  return Math.abs(ms) <= MAX_DATE_MS ? ms : undefined
}

/** Parses a date in any accepted form to epoch ms; undefined when it is not a date (or not one a Date can hold). */
export function parseDate(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? withinDateRange(Math.trunc(value)) : undefined
  if (typeof value !== 'string') return undefined
  const text = value.trim()
  const ms = MS_DATE.exec(text)
  if (ms !== null) return withinDateRange(Number(ms[1]))
  if (!ISO_DATE.test(text)) return undefined
  const hasZone = /(?:Z|[+-]\d{2}:?\d{2})$/.test(text) && text.length > 10
  const parsed = Date.parse(hasZone || text.length === 10 ? text : `${text.replace(' ', 'T')}Z`)
  return Number.isNaN(parsed) ? undefined : parsed
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export function isEmail(text: string): boolean {
  return text.length <= 254 && EMAIL.test(text)
}
