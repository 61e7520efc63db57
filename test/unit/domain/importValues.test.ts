/*
 * The cell values of import files (src/domain/imports/importValues.ts) and
 * local times as instants (src/domain/localTime.ts): each form the tools
 * write is read, everything else refused; a wall-clock time in a gap or an
 * overlap of a daylight-saving change has one answer.
 */
import t from 'tap'
import { ImportValueError, parseBoolean, parseDate, parseDateTime, parseDuration, parseTime } from '../../../src/domain/imports/importValues.js'
import { instantOfLocalTime, startOfLocalDay } from '../../../src/domain/localTime.js'

const DAY_MS = 86_400_000
const day = (year: number, month: number, date: number) => Date.UTC(year, month - 1, date) / DAY_MS

/** Whether reading threw the refusal of a value (not another error, not nothing). */
function refuses(read: () => unknown): boolean {
  try {
    read()
  } catch (error) {
    return error instanceof ImportValueError
  }
  return false
}

t.test('dates: ISO always, other orders by date_format or by their separators', async (t) => {
  t.equal(parseDate('2025-03-07', null), day(2025, 3, 7))
  t.equal(parseDate('2025-03-07', 'DD/MM/YYYY'), day(2025, 3, 7), 'an ISO date whatever the format')
  t.equal(parseDate('03/07/2025', null), day(2025, 3, 7), 'slashes: month first')
  t.equal(parseDate('03/07/2025', 'DD/MM/YYYY'), day(2025, 7, 3))
  t.equal(parseDate('7.3.2025', null), day(2025, 3, 7), 'dots: day first')
  t.equal(parseDate('3-7-2025', null), day(2025, 3, 7), 'dashes: month first')
  t.equal(parseDate('2025/03/07', null), day(2025, 3, 7))
  for (const [text, format] of [
    ['2025-02-29', null],
    ['31/04/2025', 'DD/MM/YYYY'],
    ['13/01/2025', null],
    ['2025-3', null],
    ['yesterday', null],
    ['07/03/2025', 'DD.MM.YYYY'],
    ['1899-12-31', null],
  ] as const) {
    t.ok(
      refuses(() => parseDate(text, format)),
      `${text} (${format ?? 'by look'}) is refused`,
    )
  }
})

t.test('times: 24-hour and 12-hour clocks', async (t) => {
  t.equal(parseTime('09:05'), 9 * 3_600_000 + 5 * 60_000)
  t.equal(parseTime('9:05:30'), 9 * 3_600_000 + 5 * 60_000 + 30_000)
  t.equal(parseTime('12:00:00 AM'), 0, '12 AM is midnight')
  t.equal(parseTime('12:30 PM'), 12.5 * 3_600_000, '12 PM is noon')
  t.equal(parseTime('1:05 pm'), 13 * 3_600_000 + 5 * 60_000)
  t.equal(parseTime('23:59:59.999'), 86_399_000, 'fractions of a second cut')
  for (const text of ['24:00', '13:00 PM', '0:00 AM', '9', '9:5', '09:60', 'noon'])
    t.ok(
      refuses(() => parseTime(text)),
      `${text} is refused`,
    )
})

t.test('durations: h:mm[:ss] or a plain number of the unit, either decimal separator', async (t) => {
  t.equal(parseDuration('01:30:00', 'hours'), 5_400_000)
  t.equal(parseDuration('1:30', 'hours'), 5_400_000, 'hours and minutes')
  t.equal(parseDuration('100:00:00', 'hours'), 360_000_000)
  t.equal(parseDuration('1.5', 'hours'), 5_400_000)
  t.equal(parseDuration('7,25', 'hours'), 26_100_000, 'a decimal comma')
  t.equal(parseDuration('90', 'minutes'), 5_400_000)
  t.equal(parseDuration('30', 'seconds'), 30_000)
  for (const text of ['-1', '1h', '1,234.5', '1:75', '9000:00:00', ''])
    t.ok(
      refuses(() => parseDuration(text, 'hours')),
      `'${text}' is refused`,
    )
})

t.test('flags', async (t) => {
  for (const text of ['Yes', 'TRUE', 'y', '1']) t.equal(parseBoolean(text), true, text)
  for (const text of ['No', 'false', 'n', '0', '']) t.equal(parseBoolean(text), false, `'${text}'`)
  t.ok(refuses(() => parseBoolean('Maybe')))
})

t.test('date-times: with an offset an instant, without one a local time', async (t) => {
  t.same(parseDateTime('2025-06-02T09:00:00+02:00', null), { instant: Date.UTC(2025, 5, 2, 7) })
  t.same(parseDateTime('2025-06-02T09:00:00Z', null), { instant: Date.UTC(2025, 5, 2, 9) })
  t.same(parseDateTime('2025-06-02 14:00', null), { day: day(2025, 6, 2), timeMs: 14 * 3_600_000 })
  t.same(parseDateTime('02.06.2025 2:00 PM', null), { day: day(2025, 6, 2), timeMs: 14 * 3_600_000 })
  t.ok(refuses(() => parseDateTime('2025-06-02', null)))
})

t.test('local times as instants, across the daylight-saving changes', async (t) => {
  const local = (year: number, month: number, date: number, hour: number, minute = 0) => Date.UTC(year, month - 1, date, hour, minute)
  t.equal(instantOfLocalTime(local(2025, 1, 15, 9), 'Europe/Berlin'), Date.UTC(2025, 0, 15, 8), 'winter: UTC+1')
  t.equal(instantOfLocalTime(local(2025, 7, 15, 9), 'Europe/Berlin'), Date.UTC(2025, 6, 15, 7), 'summer: UTC+2')
  t.equal(instantOfLocalTime(local(2025, 3, 30, 2, 30), 'Europe/Berlin'), Date.UTC(2025, 2, 30, 1, 30), 'the gap: 02:30 is 03:30 summer time')
  t.equal(instantOfLocalTime(local(2025, 10, 26, 2, 30), 'Europe/Berlin'), Date.UTC(2025, 9, 26, 0, 30), 'the overlap: the earlier 02:30')
  t.equal(instantOfLocalTime(local(2025, 3, 9, 2, 30), 'America/New_York'), Date.UTC(2025, 2, 9, 7, 30), 'New York’s gap')
  t.equal(instantOfLocalTime(local(2025, 1, 15, 9), 'UTC'), local(2025, 1, 15, 9))
  t.equal(instantOfLocalTime(local(2025, 1, 15, 9), 'Asia/Kolkata'), Date.UTC(2025, 0, 15, 3, 30), 'a half-hour offset')
  t.equal(startOfLocalDay(day(2025, 3, 30), 'Europe/Berlin'), Date.UTC(2025, 2, 29, 23))
})
