/*
 * An export's answer: the table written as CSV or XLSX into a streamed body
 * (streamedBody.ts), with its media type and `Content-Disposition:
 * attachment` naming the file. `exportOf` is where an endpoint that offers
 * exports asks which one the request wants; inside a batch none is offered
 * (a batch's answer is one JSON document), which is refused with 406.
 */
import type { Call } from '../call.js'
import type { ApiResponse } from '../response.js'
import { StreamedBody } from '../streamedBody.js'
import { csvChunks } from './csv.js'
import { CSV_MEDIA_TYPE, exportNotOffered, exportWanted, XLSX_MEDIA_TYPE, type ExportFormat } from './exportFormat.js'
import type { ExportTable } from './table.js'
import { xlsxChunks } from './xlsx.js'

/** The export the request wants of an endpoint that offers them; null: the usual answer. */
export function exportOf(call: Call): ExportFormat | null {
  const format = exportWanted(call.request)
  if (format !== null && call.request.inBatch) throw exportNotOffered(format, 'a batch answers JSON only')
  return format
}

/** A file name of letters, digits, `.`, `-` and `_` only (it goes into a header as it is). */
function fileName(name: string, format: ExportFormat): string {
  return `${name.replace(/[^A-Za-z0-9._-]/g, '_') || 'export'}.${format}`
}

export function exportAnswer(format: ExportFormat, table: ExportTable): ApiResponse {
  const contentType = format === 'csv' ? `${CSV_MEDIA_TYPE}; charset=utf-8; header=present` : XLSX_MEDIA_TYPE
  return {
    status: 200,
    headers: { 'Content-Type': contentType, 'Content-Disposition': `attachment; filename="${fileName(table.name, format)}"` },
    body: new StreamedBody(format === 'csv' ? csvChunks(table) : xlsxChunks(table)),
  }
}
