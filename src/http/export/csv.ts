/*
 * A table as CSV (RFC 4180): UTF-8 without a byte order mark, a header row,
 * CRLF after every row, a field quoted when it holds a comma, a quote, CR
 * or LF (a quote doubled inside). Dates are ISO 8601 in the table's time
 * zone (zonedDate.ts), booleans `true`/`false`, an empty cell an empty
 * field. One chunk per batch of rows.
 *
 * Formula injection (OWASP, "CSV Injection"): a spreadsheet opening the
 * file runs a cell that starts with `=`, `+`, `-` or `@` as a formula (and
 * one that starts with a TAB or CR, which some trim first), so a project named
 * `=HYPERLINK(…)` became a link, or worse, in the reader's sheet. Every
 * text cell that starts with one of those characters is written with a
 * `'` in front, which the spreadsheet shows as text; the header too. A
 * cell that is a number (a negative amount) stays a number: only text is
 * changed. XLSX (xlsx.ts) types its cells and needs none of this.
 */
import type { Cell, ColumnKind, ExportTable, Row } from './table.js'
import { isoInZone } from './zonedDate.js'

const NEEDS_QUOTES = /[",\r\n]/
const CRLF = '\r\n'

/** What a spreadsheet reads as the start of a formula (OWASP's list). */
const FORMULA_START = /^[=+\-@\t\r]/

/** The CSV field of a cell's text, quoted when it must be. */
function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** Text as a spreadsheet shows it and never runs: a leading `'` before what would start a formula. */
function inertText(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text
}

function cellText(cell: Cell, kind: ColumnKind, timeZone: string): string {
  if (cell === null) return ''
  if (kind === 'date' && typeof cell === 'number') return isoInZone(cell, timeZone)
  return typeof cell === 'string' ? inertText(cell) : String(cell)
}

function rowLine(row: Row, kinds: readonly ColumnKind[], timeZone: string): string {
  let line = ''
  for (let index = 0; index < row.length; index += 1) {
    if (index > 0) line += ','
    line += csvField(cellText(row[index] ?? null, kinds[index] ?? 'text', timeZone))
  }
  return line + CRLF
}

export async function* csvChunks(table: ExportTable): AsyncGenerator<Buffer, void, undefined> {
  const kinds = table.columns.map((column) => column.kind)
  yield Buffer.from(table.columns.map((column) => csvField(inertText(column.header))).join(',') + CRLF, 'utf8')
  for await (const batch of table.rows) {
    let text = ''
    for (const row of batch) text += rowLine(row, kinds, table.timeZone)
    if (text !== '') yield Buffer.from(text, 'utf8')
  }
}
