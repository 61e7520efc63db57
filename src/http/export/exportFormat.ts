/*
 * Which export a request asks for. `format=csv` or `format=xlsx` in the query
 * decides; without it, the Accept header: its media ranges are taken by
 * quality (then in the order written), and the first one the service knows
 * decides — `text/csv` or the XLSX type an export, any other known type
 * (JSON, XML, JavaScript, a wildcard) the usual answer. So `Accept: text/csv`
 * exports, `Accept: text/csv;q=0.5, application/json` does not.
 *
 * An endpoint that does not export refuses (406 TL01-9007) a request that
 * accepts nothing but an export: `format=csv|xlsx`, or an Accept header that
 * names an export type and no other type the service could answer with.
 * Exports answer GET only (a write's answer is never a file).
 */
import { ApiError } from '../../domain/errors.js'
import type { ApiRequest } from '../request.js'

export type ExportFormat = 'csv' | 'xlsx'

export const CSV_MEDIA_TYPE = 'text/csv'
export const XLSX_MEDIA_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

/** What of a request says which export it wants. */
export type ExportHead = Pick<ApiRequest, 'query' | 'headers'>

/** Media ranges that mean the usual answer (JSON, XML, JSONP) is acceptable. */
const ANSWER_RANGES: ReadonlySet<string> = new Set(['application/json', 'application/xml', 'text/xml', 'application/javascript', 'text/javascript', '*/*', 'application/*', 'text/*'])

function exportOfRange(range: string): ExportFormat | null {
  if (range === CSV_MEDIA_TYPE) return 'csv'
  if (range === XLSX_MEDIA_TYPE) return 'xlsx'
  return null
}

interface MediaRange {
  readonly type: string
  readonly quality: number
}

/** No Accept header: no media range. */
const NO_RANGES: readonly MediaRange[] = []

/**
 * The last Accept header read and its ranges: every answer reads it (response.ts dataResponse), and a client sends
 * the same header with each request, so one entry spares most of them the parse.
 */
let lastAccept = ''
let lastRanges: readonly MediaRange[] = NO_RANGES

/** The Accept header's media ranges of quality above 0, best first (stable: equal qualities in written order). */
function acceptedRanges(accept: string): readonly MediaRange[] {
  if (accept !== lastAccept) {
    lastRanges = parsedRanges(accept)
    lastAccept = accept
  }
  return lastRanges
}

function parsedRanges(accept: string): readonly MediaRange[] {
  const ranges: MediaRange[] = []
  for (const part of accept.split(',')) {
    const [typeText, ...parameters] = part.split(';')
    const type = (typeText ?? '').trim().toLowerCase()
    if (type === '') continue
    let quality = 1
    for (const parameter of parameters) {
      const [name, value] = parameter.split('=').map((piece) => piece.trim())
      if (name?.toLowerCase() === 'q' && value !== undefined && /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value)) quality = Number(value)
    }
    if (quality > 0) ranges.push({ type, quality })
  }
  return ranges.sort((a, b) => b.quality - a.quality)
}

function formatParameter(head: ExportHead): ExportFormat | null {
  const format = head.query.get('format')
  return format === 'csv' || format === 'xlsx' ? format : null
}

/** The export the request wants from an endpoint that offers them; null: the usual answer. */
export function exportWanted(head: ExportHead): ExportFormat | null {
  if (head.query.has('format')) return formatParameter(head)
  for (const range of acceptedRanges(head.headers.get('accept') ?? '')) {
    const wanted = exportOfRange(range.type)
    if (wanted !== null) return wanted
    if (ANSWER_RANGES.has(range.type)) return null
  }
  return null
}

/** The export a request insists on (nothing else is acceptable to it); null when the usual answer will do. */
export function exportRequired(head: ExportHead): ExportFormat | null {
  const format = formatParameter(head)
  if (format !== null || head.query.has('format')) return format
  const ranges = acceptedRanges(head.headers.get('accept') ?? '')
  if (ranges.some((range) => ANSWER_RANGES.has(range.type))) return null
  for (const range of ranges) {
    const wanted = exportOfRange(range.type)
    if (wanted !== null) return wanted
  }
  return null
}

export function exportNotOffered(format: ExportFormat, why: string): ApiError {
  return new ApiError('TL01-9007', `${format} is not offered here: ${why}`, 'exports (format=csv, format=xlsx) are offered by GET on lists, summaries and the reports')
}
