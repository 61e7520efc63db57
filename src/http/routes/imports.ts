/*
 * `POST /v1/import/{source}`: a CSV export of another tool's detailed time
 * report (toggl, clockify, harvest, kimai), or any CSV whose columns the
 * query names (generic), becomes time records and what they name
 * (domain/operations/importTimeRecords.ts has the rules).
 *
 * This route reads the body (importFile.ts: UTF-8, RFC 4180, the lines),
 * the options of the query, and the columns the source's layout names
 * (domain/imports/importLayouts.ts), then runs the import as ONE write in
 * slices (TenantAccess.writeInSlices) and renders the outcome: 201 with
 * what was made and matched; with dry_run=true 200 with the same counts and
 * the first rows as read, nothing stored (the operation's ImportPreview
 * rolls its write back; the answer then waits for the durable barrier like
 * a read, since it describes the state it saw).
 *
 * Query options: dry_run, preview (rows shown by a dry run, 10; at most
 * MAX_PREVIEW_ROWS), unknown_users (refuse | self), time_zone (IANA; the
 * account's by default), date_format, duration_unit (hours | minutes |
 * seconds), delimiter (`,` `;` tab; detected by default), tag_separator
 * (`,`), map.<field>=<header>.
 */
import { assertionFailed } from '../../assert.js'
import { isTimeZone } from '../../domain/calendar.js'
import { ApiError, wrongParameter } from '../../domain/errors.js'
import { IMPORT_FIELDS, IMPORT_SOURCES, isImportField, isImportSource, planColumns, type ImportField, type ImportSource } from '../../domain/imports/importLayouts.js'
import { DATE_FORMATS, DURATION_UNITS, type DateFormat, type DurationUnit } from '../../domain/imports/importValues.js'
import { ImportPreview, importTimeRecords, previewImport, type ImportInput, type ImportOutcome, type NamedObject, type UnknownUsers } from '../../domain/operations/importTimeRecords.js'
import type { Call } from '../call.js'
import { isoInZone } from '../export/zonedDate.js'
import { DELIMITERS, importText, readImportFile } from '../importFile.js'
import { requireSession } from '../requireSession.js'
import { dataResponse, type ApiResponse } from '../response.js'

const DEFAULT_PREVIEW_ROWS = 10
export const MAX_PREVIEW_ROWS = 100

/** Content types a CSV file arrives with (browsers label .csv files in several ways); none at all is taken too. */
const CSV_TYPES = new Set([
  'text/csv',
  'text/plain',
  'application/csv',
  'text/comma-separated-values',
  'text/x-csv',
  'application/vnd.ms-excel',
  'application/octet-stream',
  'text/tab-separated-values',
])

interface ImportOptions {
  readonly dryRun: boolean
  readonly previewRows: number
  readonly unknownUsers: UnknownUsers
  readonly timeZone: string | null
  readonly dateFormat: DateFormat | null
  readonly durationUnit: DurationUnit
  readonly delimiter: string | null
  readonly tagSeparator: string
  readonly mapping: ReadonlyMap<ImportField, string>
}

function checkContentType(header: string | undefined): void {
  if (header === undefined || header.trim() === '') return
  const [type = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase())
  if (!CSV_TYPES.has(type)) throw new ApiError('TL01-9005', `an import is a CSV file (Content-Type text/csv), not ${type.slice(0, 64)}`)
  const charset = parameters
    .find((parameter) => parameter.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '')
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') throw new ApiError('TL01-9005', `an import is UTF-8 text, not ${charset.slice(0, 32)}: save the file as UTF-8`)
}

function oneOf<T extends string>(query: ReadonlyMap<string, string>, name: string, allowed: readonly T[], fallback: T): T {
  const value = query.get(name)
  if (value === undefined || value === '') return fallback
  if (!(allowed as readonly string[]).includes(value)) throw wrongParameter(`${name} must be one of ${allowed.join(', ')}, got '${value.slice(0, 32)}'`)
  return value as T
}

function flag(query: ReadonlyMap<string, string>, name: string): boolean {
  return oneOf(query, name, ['true', 'false'], 'false') === 'true'
}

function previewRows(query: ReadonlyMap<string, string>): number {
  const text = query.get('preview')
  if (text === undefined || text === '') return DEFAULT_PREVIEW_ROWS
  if (!/^\d{1,4}$/.test(text) || Number(text) > MAX_PREVIEW_ROWS) throw wrongParameter(`preview must be a number of rows from 0 to ${MAX_PREVIEW_ROWS}`)
  return Number(text)
}

/** `map.<field>=<header>`: 400 for a field the import does not have. */
function mappingOf(query: ReadonlyMap<string, string>): Map<ImportField, string> {
  const mapping = new Map<ImportField, string>()
  for (const [name, header] of query) {
    if (!name.startsWith('map.')) continue
    const field = name.slice('map.'.length)
    if (!isImportField(field)) throw wrongParameter(`${name.slice(0, 64)}: no such field; the fields are ${IMPORT_FIELDS.join(', ')}`)
    if (header.trim() === '') throw wrongParameter(`${name}: name the column's header`)
    mapping.set(field, header)
  }
  return mapping
}

function parseOptions(query: ReadonlyMap<string, string>): ImportOptions {
  const timeZone = query.get('time_zone') ?? null
  if (timeZone !== null && !isTimeZone(timeZone)) throw wrongParameter(`time_zone must be an IANA time zone such as Europe/Berlin, got '${timeZone.slice(0, 64)}'`)
  const delimiterName = query.get('delimiter') ?? null
  const delimiter = delimiterName === null || delimiterName === '' ? null : delimiterName === '\t' ? '\t' : (DELIMITERS as Record<string, string>)[delimiterName]
  if (delimiter === undefined) throw wrongParameter(`delimiter must be one of ',', ';', tab`)
  const tagSeparator = query.get('tag_separator') ?? ','
  if (tagSeparator === '' || tagSeparator.length > 3) throw wrongParameter('tag_separator must be 1 to 3 characters')
  return {
    dryRun: flag(query, 'dry_run'),
    previewRows: previewRows(query),
    unknownUsers: oneOf(query, 'unknown_users', ['refuse', 'self'] as const, 'refuse'),
    timeZone,
    dateFormat: (query.get('date_format') ?? '') === '' ? null : oneOf(query, 'date_format', DATE_FORMATS, 'YYYY-MM-DD'),
    durationUnit: oneOf(query, 'duration_unit', Object.keys(DURATION_UNITS) as DurationUnit[], 'hours'),
    delimiter,
    tagSeparator,
    mapping: mappingOf(query),
  }
}

/** An object a row names, as the answer shows it: a new one of a dry run has no id (it was never kept). */
function shownObject(object: NamedObject | null, dryRun: boolean): Record<string, unknown> | null {
  if (object === null) return null
  return { name: object.name, id: object.existing || !dryRun ? object.id : null, existing: object.existing }
}

function rendered(source: ImportSource, outcome: ImportOutcome, dryRun: boolean, ignoredColumns: readonly string[]): Record<string, unknown> {
  const at = (ms: number | null) => (ms === null ? null : isoInZone(ms, outcome.timeZone))
  return {
    source,
    dryRun,
    rows: outcome.rows,
    timeZone: outcome.timeZone,
    created: outcome.created,
    matched: outcome.matched,
    users: outcome.users,
    assignedToCaller: outcome.assignedToCaller,
    ignoredColumns,
    preview: outcome.preview.map((row) => ({
      line: row.line,
      user: row.user,
      assignedToCaller: row.assignedToCaller,
      client: shownObject(row.client, dryRun),
      project: shownObject(row.project, dryRun),
      task: shownObject(row.task, dryRun),
      tags: row.tags.map((tag) => shownObject(tag, dryRun)),
      start: at(row.start),
      stop: at(row.stop),
      duration: row.duration,
      billable: row.billable,
      description: row.description,
    })),
  }
}

export async function importRecords(call: Call, params: Record<string, string>): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const source = params.source ?? ''
  if (!isImportSource(source)) throw new ApiError('TL01-9003', `no import from '${source.slice(0, 32)}': the sources are ${IMPORT_SOURCES.join(', ')}`)
  checkContentType(call.request.headers.get('content-type'))
  const options = parseOptions(call.request.query)
  const maxRows = call.services.config.maxImportRows
  const file = await readImportFile(importText(call.request.body), options.delimiter, maxRows)
  const plan = planColumns(source, file.header, options.mapping, options.unknownUsers === 'self')
  const input: ImportInput = {
    plan,
    lines: file.lines,
    timeZone: options.timeZone,
    values: { dateFormat: options.dateFormat, durationUnit: options.durationUnit, tagSeparator: options.tagSeparator },
    unknownUsers: options.unknownUsers,
    previewRows: options.dryRun ? options.previewRows : 0,
    maxRows,
  }
  if (!options.dryRun) {
    const outcome = await tenant.writeInSlices((tx) => importTimeRecords(tx, principal, input))
    return dataResponse(call.request, rendered(source, outcome, false, plan.ignored), { root: 'import' }, 201)
  }
  const outcome = await tenant
    .writeInSlices((tx) => previewImport(tx, principal, input))
    .then(
      () => assertionFailed('an import dry run ended without its preview'),
      (error: unknown) => {
        if (error instanceof ImportPreview) return error.outcome
        throw error
      },
    )
  // The preview describes the state it saw: answered once that state is durable, like a read.
  await tenant.read(() => null)
  return dataResponse(call.request, rendered(source, outcome, true, plan.ignored), { root: 'import' })
}
