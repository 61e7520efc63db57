/*
 * A small table made whole at once (a summary, a report: a row per group or
 * period), as one batch of rows. The rows are plain objects; the columns
 * name the properties to write, in order.
 */
import type { Cell, ColumnKind, ExportTable, Row } from './table.js'

export interface PlainColumn {
  readonly header: string
  readonly kind: ColumnKind
}

async function* oneBatch(rows: readonly Row[]): AsyncGenerator<readonly Row[], void, undefined> {
  yield rows
}

export function plainTable(name: string, timeZone: string, columns: readonly PlainColumn[], records: readonly Readonly<Record<string, Cell>>[]): ExportTable {
  const rows = records.map((record) => columns.map((column) => record[column.header] ?? null))
  return { name, timeZone, columns, rows: oneBatch(rows) }
}
