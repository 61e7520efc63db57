/*
 * A table as an XLSX workbook of one sheet, written by exceljs's streaming
 * WorkbookWriter into a stream whose output is handed on as it comes. Each
 * batch of rows is committed (exceljs then holds none of them), then one
 * event-loop turn lets its zip writer compress what was committed (without
 * it the sheet's XML piles up uncompressed until the end), then the bytes
 * produced so far are yielded; the next batch is read only when the client
 * took them. Memory stays at a batch and the zip writer's buffers.
 *
 * Cells: numbers and booleans as such; dates as date cells showing the
 * local time of the table's time zone (`yyyy-mm-dd hh:mm:ss`: a
 * spreadsheet's dates have no zone); text as text (never a formula), with
 * the characters XML 1.0 cannot carry as U+FFFD, as in the XML answers, and
 * line breaks as LF.
 */
import { PassThrough } from 'node:stream'
import ExcelJS from 'exceljs'
import { NOT_XML_CHARS } from '../response.js'
import type { Cell, ColumnKind, ExportTable } from './table.js'
import { wallClockDate } from './zonedDate.js'

const DATE_FORMAT = 'yyyy-mm-dd hh:mm:ss'
/** A line break in a cell is LF, as a spreadsheet writes it (XML would turn a CR written as it is into LF anyway). */
const LINE_BREAKS = /\r\n?/g
/** A sheet's name: at most 31 characters, none of : \ / ? * [ ]. */
const SHEET_NAME_MAX = 31

function cellValue(cell: Cell, kind: ColumnKind, timeZone: string): ExcelJS.CellValue {
  if (cell === null) return null
  if (kind === 'date' && typeof cell === 'number') return wallClockDate(cell, timeZone)
  if (typeof cell === 'string') return cell.replace(NOT_XML_CHARS, '\uFFFD').replace(LINE_BREAKS, '\n')
  return cell
}

function columnWidth(kind: ColumnKind, header: string): number {
  const byKind = kind === 'date' ? 20 : kind === 'text' ? 24 : 12
  return Math.max(byKind, Math.min(header.length + 2, 40))
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

export async function* xlsxChunks(table: ExportTable): AsyncGenerator<Buffer, void, undefined> {
  const output = new PassThrough()
  const produced: Buffer[] = []
  output.on('data', (chunk: Buffer) => produced.push(chunk))
  const outputEnded = new Promise<void>((resolve, reject) => {
    output.on('end', resolve)
    output.on('error', reject)
  })
  const taken = (): Buffer | null => (produced.length === 0 ? null : Buffer.concat(produced.splice(0)))
  try {
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: output, useStyles: true, useSharedStrings: false })
    const sheet = workbook.addWorksheet(table.name.replace(/[:\\/?*[\]]/g, '_').slice(0, SHEET_NAME_MAX))
    sheet.columns = table.columns.map((column) => ({
      header: column.header,
      width: columnWidth(column.kind, column.header),
      ...(column.kind === 'date' ? { style: { numFmt: DATE_FORMAT } } : {}),
    }))
    const kinds = table.columns.map((column) => column.kind)
    for await (const batch of table.rows) {
      for (const row of batch) sheet.addRow(row.map((cell, index) => cellValue(cell, kinds[index] ?? 'text', table.timeZone))).commit()
      await nextTurn()
      const bytes = taken()
      if (bytes !== null) yield bytes
    }
    sheet.commit()
    await workbook.commit()
    await outputEnded
    const rest = taken()
    if (rest !== null) yield rest
  } finally {
    output.destroy()
  }
}
