/*
 * What an export writes, whatever its format: a table of named columns and
 * rows, the rows coming a batch at a time (an async iterable pulled at the
 * client's pace, so a hundred thousand rows are never all made at once).
 * A cell is text, a number, a boolean or empty; in a date column a number
 * is the instant in epoch ms, written in the table's time zone (the
 * account's). csv.ts and xlsx.ts write a table; recordTable.ts and
 * plainTable.ts make one.
 */

export type ColumnKind = 'text' | 'number' | 'boolean' | 'date'

export interface ExportColumn {
  readonly header: string
  readonly kind: ColumnKind
}

export type Cell = string | number | boolean | null

export type Row = readonly Cell[]

export interface ExportTable {
  /** The file's name without its extension (`timerecords`). */
  readonly name: string
  readonly columns: readonly ExportColumn[]
  /** The IANA time zone dates are written in. */
  readonly timeZone: string
  readonly rows: AsyncIterable<readonly Row[]>
}
