/*
 * The query parameters of the API as OpenAPI parameter objects, kept once
 * in `components.parameters` and referred to by name from each operation:
 * the answer's format and its dates, the list options ($filter, $orderby, $top, $skip,
 * no_expand, $inlinecount), write options (response_object,
 * version_ignore), the conditional headers (If-None-Match, If-Match), and
 * the range parameters of the reports. `append` is per resource (its own
 * counters), so it is built where the resource's operations are.
 */
import { MAX_PAGE_SIZE } from '../../query/listQuery.js'
import type { JsonSchema } from './jsonSchema.js'

export type Parameter = { name: string; in: 'query' | 'path' | 'header'; description: string; required?: boolean; schema: JsonSchema }

function header(name: string, description: string): Parameter {
  return { name, in: 'header', description, schema: { type: 'string' } }
}

/** A query parameter; its example goes into the description (Swagger UI would send an `example` with "try it"). */
function query(name: string, description: string, schema: JsonSchema, example?: string): Parameter {
  return { name, in: 'query', description: example === undefined ? description : `${description}; e.g. \`${example}\``, schema }
}

const TRUE_OR_FALSE: JsonSchema = { type: 'string', enum: ['true', 'false'] }

export const PARAMETERS: Record<string, Parameter> = {
  format: query('format', 'the answer’s format, instead of the Accept header (JSON by default); `csv` and `xlsx` download lists, summaries and reports as a file (406 TL01-9007 elsewhere)', {
    type: 'string',
    enum: ['json', 'xml', 'csv', 'xlsx'],
  }),
  dates: query(
    'dates',
    '`iso`: dates in the JSON answer as ISO 8601 text (`2025-03-03T09:00:00.000Z`) instead of `/Date(<ms>)/` (`ms`, the default); the same as the Accept header `application/json; dates=iso`',
    { type: 'string', enum: ['ms', 'iso'] },
  ),
  suppress_response_code: query('suppress_response_code', '`true`: the status is always 200, an error is in the body', TRUE_OR_FALSE),
  filter: query(
    '$filter',
    "an OData filter: `eq ne gt ge lt le`, `and or not`, `add sub mul div mod`, parentheses, field paths with `/` (`client/id`), literals (`'text'`, numbers, `true`, `null`, `datetime'2025-01-31T00:00:00Z'`) and string functions (`startswith(name, 'A') eq true`)",
    { type: 'string', maxLength: 4096 },
    "active eq true and startswith(name, 'A') eq true",
  ),
  orderby: query('$orderby', 'comma-separated `<field> [asc|desc]` (field paths with `/`)', { type: 'string' }, 'name asc'),
  top: query('$top', `how many objects to answer (at most ${MAX_PAGE_SIZE} a page)`, { type: 'integer', minimum: 0 }),
  skip: query('$skip', 'how many matching objects to skip', { type: 'integer', minimum: 0 }),
  no_expand: query('no_expand', '`true`: referenced objects as stubs (id, version, displayName) instead of whole objects', TRUE_OR_FALSE),
  response_object: query('response_object', '`true`: a create or update answers the whole object instead of `{id, version}`', TRUE_OR_FALSE),
  version_ignore: query('version_ignore', '`true`: update whatever the object’s version is (no 409 for a stale or missing `version`)', TRUE_OR_FALSE),
  hard: query('hard', '`true`: remove the object for good instead of moving it to the trash', TRUE_OR_FALSE),
  summary: query('summary', '`[<groupedBy>;]<function>[;<function>…]` with count(), sum(f), avg(f), min(f), max(f); groupedBy a field path', { type: 'string' }, 'project/id;count();sum(duration)'),
  groupBy: query('summary', 'group the totals by a field path of time records (`project/id`, `user/id`); none: one group `*`', { type: 'string' }, 'project/id'),
  range: query('range', '0 no limit; 1 the day, 7 the week, 31 the month, 365 the year of range_from; 999 from range_from to range_to', { type: 'integer', enum: [0, 1, 7, 31, 365, 999] }),
  range_from: query('range_from', 'first day of the range (yyyy-MM-dd, the account’s time zone; default today)', { type: 'string', format: 'date' }),
  range_to: query('range_to', 'last day of the range (yyyy-MM-dd); with 7, 31, 365 extends to the end of its week, month, year', { type: 'string', format: 'date' }),
  offset: query('offset', 'shifts the range by whole ranges (negative: into the past)', { type: 'integer' }),
  depth: query('depth', 'how many earlier periods trendedtotals compares (default 1)', { type: 'integer', minimum: 0, maximum: 120 }),
  slice_by: query('slice_by', '1 days, 7 weeks, 31 months, 365 years', { type: 'integer', enum: [1, 7, 31, 365] }),
  apikey: query('apikey', 'the API key (or the X-Api-Key header)', { type: 'string' }),
  before: query('before', 'a history page: only changes of log entries before this sequence number (the `next` of the page before gives it)', { type: 'integer', minimum: 1 }),
  historyTop: query('$top', 'how many changes a page of history holds (default 100, at most 1000; a page ends with a whole log entry, so it may hold a few more)', {
    type: 'integer',
    minimum: 1,
    maximum: 1000,
  }),
  inlinecount: query('$inlinecount', '`allpages`: the number of matching objects on all pages in the X-Total-Count header (the body stays the page)', { type: 'string', enum: ['allpages', 'none'] }),
  ifNoneMatch: header('If-None-Match', 'the ETag of an earlier answer: while it is still current the answer is 304 without a body'),
  ifMatch: header('If-Match', 'the ETag the object must be at (its version leads the tag; `"<version>"` does too): 412 TL01-1110 otherwise; an alternative to the body’s `version`'),
}

/** A reference to a parameter of `components.parameters`. */
export function parameterRef(name: keyof typeof PARAMETERS & string): { $ref: string } {
  return { $ref: `#/components/parameters/${name}` }
}

/** A path parameter (`{id}`, `{group}`). */
export function pathParameter(name: string, description = name === 'id' ? 'the object’s id' : name): Parameter {
  return { name, in: 'path', description, required: true, schema: { type: 'string' } }
}
