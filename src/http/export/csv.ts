/*
 * A table as CSV (RFC 4180): UTF-8 without a byte order mark, a header row,
 * CRLF after every row, a field quoted when it holds a comma, a quote, CR
 * or LF (a quote doubled inside). Dates are ISO 8601 in the table's time
 * zone (zonedDate.ts), booleans `true`/`false`, an empty cell an empty
 * field. Text is written as it is stored: a cell that starts with `=` is
 * text to a CSV reader; a spreadsheet that runs it as a formula is asked
 * for XLSX instead, where text stays text. One chunk per batch of rows.
 */
import type { Cell, ColumnKind, ExportTable, Row } from './table.js'
import { isoInZone } from './zonedDate.js'

const NEEDS_QUOTES = /[",\r\n]/
const CRLF = '\r\n'

export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

function cellText(cell: Cell, kind: ColumnKind, timeZone: string): string {
  if (cell === null) return ''
  if (kind === 'date' && typeof cell === 'number') return isoInZone(cell, timeZone)
  return String(cell)
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
  yield Buffer.from(table.columns.map((column) => csvField(column.header)).join(',') + CRLF, 'utf8')
  for await (const batch of table.rows) {
    let text = ''
    for (const row of batch) text += rowLine(row, kinds, table.timeZone)
    if (text !== '') yield Buffer.from(text, 'utf8')
  }
}
