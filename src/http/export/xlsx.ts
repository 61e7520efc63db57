/*
 * A table as an XLSX workbook of one sheet, written by exceljs's streaming
 * WorkbookWriter into a stream whose output is handed on as it comes. Each
 * batch of rows is committed (exceljs then holds none of them as rows), and
 * the bytes produced so far are yielded; the next batch is read only when
 * the client took them. The sheet's XML goes to the zip writer through a
 * stream that exceljs writes without heeding backpressure, and the zip
 * writer deflates it more slowly than rows are made: unchecked, the XML of
 * a 100,000-row export piled up there (160 MB, bench/RESULTS.md). So after
 * each batch, while more than SHEET_BACKLOG_BYTES wait in that stream, the
 * next batch waits for it to drain. That stream is exceljs's internal
 * (the sheet stream's first pipe); without it, the export still works,
 * unchecked.
 *
 * Cells: numbers and booleans as such; dates as date cells showing the
 * local time of the table's time zone (`yyyy-mm-dd hh:mm:ss`: a
 * spreadsheet's dates have no zone); text as text (never a formula), with
 * the characters XML 1.0 cannot carry as U+FFFD, as in the XML answers, and
 * line breaks as LF.
 */
import { PassThrough } from 'node:stream'
import type ExcelJS from 'exceljs'
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

/** XML of the sheet that may wait for the zip writer before the next batch of rows is made. */
const SHEET_BACKLOG_BYTES = 256 * 1024

/** The stream between the sheet's XML and the zip writer, as exceljs 4 builds it (a readable-stream PassThrough). */
interface SheetPipe {
  readonly _writableState?: { readonly length: number }
  once(event: 'drain' | 'close' | 'error', listener: () => void): unknown
  off(event: 'drain' | 'close' | 'error', listener: () => void): unknown
}

function sheetPipe(sheet: ExcelJS.Worksheet): SheetPipe | undefined {
  return (sheet as unknown as { stream?: { pipes?: SheetPipe[] } }).stream?.pipes?.[0]
}

/** Resolves once the sheet's XML waiting for the zip writer is below SHEET_BACKLOG_BYTES (at once when it is). */
function sheetDrained(sheet: ExcelJS.Worksheet): Promise<void> {
  const pipe = sheetPipe(sheet)
  if (pipe === undefined || (pipe._writableState?.length ?? 0) <= SHEET_BACKLOG_BYTES) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      pipe.off('drain', done)
      pipe.off('close', done)
      pipe.off('error', done)
      resolve()
    }
    pipe.once('drain', done)
    pipe.once('close', done)
    pipe.once('error', done)
  })
}

/**
 * exceljs, loaded on the first XLSX export: it is a large module (27 MB of memory and 0.2 s at start-up here) that
 * most servers never need.
 */
let excelModule: Promise<typeof ExcelJS> | null = null
function loadExcel(): Promise<typeof ExcelJS> {
  excelModule ??= import('exceljs').then((module) => module.default)
  return excelModule
}

export async function* xlsxChunks(table: ExportTable): AsyncGenerator<Buffer, void, undefined> {
  const Excel = await loadExcel()
  const output = new PassThrough()
  const produced: Buffer[] = []
  output.on('data', (chunk: Buffer) => produced.push(chunk))
  const outputEnded = new Promise<void>((resolve, reject) => {
    output.on('end', resolve)
    output.on('error', reject)
  })
  const taken = (): Buffer | null => (produced.length === 0 ? null : Buffer.concat(produced.splice(0)))
  try {
    const workbook = new Excel.stream.xlsx.WorkbookWriter({ stream: output, useStyles: true, useSharedStrings: false })
    const sheet = workbook.addWorksheet(table.name.replace(/[:\\/?*[\]]/g, '_').slice(0, SHEET_NAME_MAX))
    sheet.columns = table.columns.map((column) => ({
      header: column.header,
      width: columnWidth(column.kind, column.header),
      ...(column.kind === 'date' ? { style: { numFmt: DATE_FORMAT } } : {}),
    }))
    const kinds = table.columns.map((column) => column.kind)
    // One style object per column, shared by its cells: exceljs recognizes a style object it has seen (a WeakMap),
    // while working out a style anew for each cell took a third of the time of a 100,000-row export.
    const styles: Partial<ExcelJS.Style>[] = table.columns.map((column) => (column.kind === 'date' ? { numFmt: DATE_FORMAT } : {}))
    for await (const batch of table.rows) {
      for (const values of batch) {
        const row = sheet.addRow(values.map((cell, index) => cellValue(cell, kinds[index] ?? 'text', table.timeZone)))
        row.eachCell({ includeEmpty: true }, (cell, column) => {
          cell.style = styles[column - 1] ?? {}
        })
        row.commit()
      }
      // A turn first: the zip writer takes up the sheet's stream (its pipe appears) and works only between turns.
      await nextTurn()
      await sheetDrained(sheet)
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
