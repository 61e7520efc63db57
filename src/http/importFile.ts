/*
 * The body of an import, read as CSV: UTF-8 text (a byte order mark is
 * skipped; any other encoding is refused, not guessed), RFC 4180 fields as
 * the tools write them — quoted when they hold the delimiter, a quote or a
 * line break, a quote inside doubled — parsed by csv-parse. The delimiter
 * is `delimiter` (`,`, `;` or `tab`) or, without it, whichever of the
 * three the header line holds most (Kimai and spreadsheets in many
 * languages write `;`). Empty lines, and lines of empty fields only, are
 * skipped. Line breaks are read as `\n` (CRLF and CR too, inside quoted
 * fields as well: a description keeps its lines, with `\n` between them).
 *
 * Every line must have as many fields as the header; a refusal (400) names
 * the line a record starts on (the header is line 1; a quoted line break
 * makes a record span lines) and, where the parser knows it, the column.
 * Limits: MAX_IMPORT_COLUMNS columns, MAX_IMPORT_RECORD_CHARS characters
 * in one record, `maxRows` rows (MAX_IMPORT_ROWS; 412 TL01-9002, read no further);
 * the body itself is bounded by MAX_IMPORT_BYTES (requestBody.ts).
 *
 * The text is handed to the parser a piece at a time with a turn of the
 * event loop between pieces, so a file of many megabytes never holds the
 * other tenants' requests for long.
 */
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { CsvError, parse, type Info } from 'csv-parse'
import { ApiError, wrongParameter } from '../domain/errors.js'
import type { ImportLine } from '../domain/imports/interpretRow.js'

const MAX_IMPORT_COLUMNS = 256
const MAX_IMPORT_RECORD_CHARS = 128 * 1024
/** Characters handed to the parser between two turns of the event loop. */
const PIECE_CHARS = 256 * 1024

export const DELIMITERS = { ',': ',', ';': ';', tab: '\t' } as const

export interface ImportFile {
  readonly header: readonly string[]
  readonly lines: readonly ImportLine[]
  readonly delimiter: string
}

/** The body as text; 400 for anything but UTF-8. */
export function importText(body: Buffer): string {
  if ((body[0] === 0xff && body[1] === 0xfe) || (body[0] === 0xfe && body[1] === 0xff)) {
    throw wrongParameter('the file is UTF-16 text: save it as UTF-8 (CSV UTF-8)')
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body)
  } catch {
    throw wrongParameter('the file is not UTF-8 text: save it as UTF-8 (CSV UTF-8)')
  }
}

/** The delimiter a header line uses: the most frequent of `,` `;` tab (`,` when none is). */
function detectDelimiter(text: string): string {
  const end = text.indexOf('\n')
  const headerLine = end < 0 ? text : text.slice(0, end)
  let best = ','
  let bestCount = 0
  for (const candidate of [',', ';', '\t']) {
    const count = headerLine.split(candidate).length - 1
    if (count > bestCount) {
      best = candidate
      bestCount = count
    }
  }
  return best
}

async function* pieces(text: string): AsyncGenerator<string> {
  for (let offset = 0; offset < text.length; offset += PIECE_CHARS) {
    yield text.slice(offset, offset + PIECE_CHARS)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/**
 * The line a record starts on: the line it ends on (csv-parse's count), less the line breaks inside it. Its raw text
 * may begin with the empty lines skipped before it and ends with its own line break: neither counts.
 */
function startLine(info: Info, raw: string): number {
  const inside = raw.replace(/^\n+/, '').replace(/\n$/, '')
  let breaks = 0
  for (let at = inside.indexOf('\n'); at >= 0; at = inside.indexOf('\n', at + 1)) breaks += 1
  return info.lines - breaks
}

function parseRefusal(error: CsvError, header: readonly string[]): ApiError {
  const details = error as CsvError & { lines?: number; column?: number | string | null }
  const line = details.lines ?? 0
  const column = typeof details.column === 'number' ? header[details.column] : undefined
  const where = `line ${line}${column === undefined ? '' : `, column '${column}'`}`
  switch (error.code) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH':
      return wrongParameter(`${where}: ${error.message.replace(/ on line \d+$/, '')} (the header has ${header.length} columns; a field holding the delimiter must be quoted)`)
    case 'CSV_QUOTE_NOT_CLOSED':
      return wrongParameter(`${where}: a quoted field is not closed`)
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return wrongParameter(`${where}: a quote inside a quoted field must be doubled ("")`)
    case 'INVALID_OPENING_QUOTE':
      return wrongParameter(`${where}: a field with a quote in it must be quoted as a whole, its quotes doubled ("a ""b"" c")`)
    case 'CSV_MAX_RECORD_SIZE':
      return wrongParameter(`${where}: a record longer than ${MAX_IMPORT_RECORD_CHARS} characters`)
    default:
      return wrongParameter(`${where}: ${error.message}`)
  }
}

/** The file's header and lines (see the top); `delimiter` null: detected. */
export async function readImportFile(body: string, delimiter: string | null, maxRows: number): Promise<ImportFile> {
  // One kind of line break: csv-parse counts a CRLF inside a quoted field as two lines (and the lines are named).
  const text = body.replace(/\r\n?/g, '\n')
  const chosen = delimiter ?? detectDelimiter(text)
  const parser = parse({
    delimiter: chosen,
    bom: true,
    info: true,
    raw: true,
    skip_empty_lines: true,
    skip_records_with_empty_values: true,
    max_record_size: MAX_IMPORT_RECORD_CHARS,
  })
  let header: string[] | null = null
  const lines: ImportLine[] = []
  /** A refusal of ours stops the pipeline, which may then report the abort it caused instead: this one is answered. */
  let refusal: ApiError | null = null
  const refuse = (error: ApiError): never => {
    refusal = error
    throw error
  }
  try {
    await pipeline(Readable.from(pieces(text)), parser, async (records: AsyncIterable<{ record: string[]; info: Info; raw: string }>) => {
      for await (const { record, info, raw } of records) {
        if (header === null) {
          if (record.length > MAX_IMPORT_COLUMNS) refuse(new ApiError('TL01-9002', `an import file has at most ${MAX_IMPORT_COLUMNS} columns; this one has ${record.length}`))
          header = record.map((name) => name.trim())
          continue
        }
        if (lines.length === maxRows) {
          refuse(new ApiError('TL01-9002', `an import takes at most ${maxRows} rows (MAX_IMPORT_ROWS); line ${startLine(info, raw)} is past them: split the file`))
        }
        lines.push({ line: startLine(info, raw), cells: record })
      }
    })
  } catch (error) {
    if (refusal !== null) throw refusal
    if (error instanceof CsvError) throw parseRefusal(error, header ?? [])
    throw error
  }
  if (header === null) throw wrongParameter('the file is empty: an import needs a header line and at least one row')
  if (lines.length === 0) throw wrongParameter('the file has a header line but no rows')
  return { header, lines, delimiter: chosen }
}
