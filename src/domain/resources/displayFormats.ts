/*
 * The display preferences the original service keeps on accounts and users:
 * a date and a time format, chosen from the patterns its $metadata lists
 * (a value outside them is a 412 naming the field), and a working day as
 * "HH:mm" texts. Declared once here so Account and User agree.
 */
import type { FieldDecl } from '../schema.js'
import { field, pattern } from '../declare.js'

/** The original's dateFormat patterns, dots escaped so that each alternative matches only itself. */
const DATE_FORMAT_PATTERN = 'dd\\.MM\\.yyyy|MM/dd/yyyy|dd/MM/yyyy|yyyy-MM-dd|yyyy\\.MM\\.dd|yyyy/MM/dd'
/** The original's timeFormat patterns. */
const TIME_FORMAT_PATTERN = 'HH:mm|K:mm a|h:mm a|hh:mm a'
/** A time of day, 00:00 to 23:59. */
const TIME_OF_DAY_PATTERN = '(?:[01][0-9]|2[0-3]):[0-5][0-9]'

export function displayFormatFields(): FieldDecl[] {
  return [
    field.string('dateFormat', 'how dates are shown: dd.MM.yyyy, MM/dd/yyyy, dd/MM/yyyy, yyyy-MM-dd, yyyy.MM.dd or yyyy/MM/dd', { constraints: [pattern(DATE_FORMAT_PATTERN, 'dd.MM.yyyy')] }),
    field.string('timeFormat', 'how times are shown: HH:mm, K:mm a, h:mm a or hh:mm a', { constraints: [pattern(TIME_FORMAT_PATTERN, 'HH:mm')] }),
    field.string('workingTimeStart', 'start of the working day, HH:mm', { constraints: [pattern(TIME_OF_DAY_PATTERN, '08:00')] }),
    field.string('workingTimeEnd', 'end of the working day, HH:mm', { constraints: [pattern(TIME_OF_DAY_PATTERN, '17:00')] }),
  ]
}
