/*
 * Dates in JSON answers. By default they are `"/Date(<ms since 1970>)/"`,
 * as the original service writes them; a client that would rather read
 * ISO 8601 text (`"2025-03-03T09:00:00.000Z"`, UTC, what `new Date(text)`
 * and every JSON library read) opts in per request:
 *
 *   * the query option `dates=iso` (`dates=ms` is the default, said out
 *     loud; anything else is 400 TL01-1105, refused before the request is
 *     routed, so a write is not made and then answered with an error);
 *   * or, where a query cannot be changed, the media type parameter
 *     `dates=iso` of JSON in the Accept header:
 *     `Accept: application/json; dates=iso` (also on `*\/*`), the way
 *     OData's `odata.metadata=` parameter chooses a form of its JSON. The
 *     query option wins when both are given.
 *
 * Such an answer says so in its type: `Content-Type: application/json;
 * charset=utf-8; dates=iso`. It applies to every JSON answer that carries
 * dates: objects, lists, views, inner collections, writes with
 * response_object, actions, tokens, sessions, `$dummy`, batch items (an
 * item takes the batch's `dates` when its path names none, and the batch's
 * Accept when it has no headers of its own) and the change feed's events
 * (`dates=iso` on /v1/changes). XML answers are ISO 8601 anyway; CSV and
 * XLSX files have dates of their own (the account's time zone).
 *
 * The cost stays on the answers that ask: the default rendering is not
 * touched (rows kept as JSON text across answers, domain/renderedJson.ts,
 * serve `/Date(ms)/` answers only); an ISO answer is rendered with OutDate
 * values and serialized with a replacer that writes them as ISO text
 * (domain/values.ts isoDatesReplacer), outside that cache.
 */
import { wrongParameter, type ApiError } from '../domain/errors.js'
import type { ApiRequest } from './request.js'

/** What of a request chooses the form (the answer's head: response.ts's RequestHead has both). */
type DatesHead = Pick<ApiRequest, 'query' | 'headers'>

export type JsonDateForm = 'ms' | 'iso'

/** The query option. */
export const DATES_OPTION = 'dates'

/** The media type parameter of Accept (and of the answer's Content-Type) that asks for ISO dates. */
export const ISO_DATES_PARAMETER = 'dates=iso'

/** `dates=iso` as a parameter of an Accept range that JSON answers (application/json, application/*, *\/*). */
const ISO_IN_ACCEPT = /(?:^|,)\s*(?:application\/json|application\/\*|\*\/\*)\s*;[^,]*\bdates\s*=\s*"?iso"?\s*(?:[;,]|$)/i

/** How the request wants the dates of its JSON answer written. */
export function jsonDateFormOf(request: DatesHead): JsonDateForm {
  const option = request.query.get(DATES_OPTION)
  if (option !== undefined) return option === 'iso' ? 'iso' : 'ms'
  const accept = request.headers.get('accept')
  // Every answer asks this: a header that does not name the parameter at all costs a scan or three, not the expression.
  if (accept === undefined || !(accept.includes('dates') || accept.includes('DATES') || accept.includes('Dates'))) return 'ms'
  return ISO_IN_ACCEPT.test(accept) ? 'iso' : 'ms'
}

/** 400 for a `dates` query option other than `iso` or `ms`; null when there is none or it is one of them. */
export function datesOptionProblem(request: DatesHead): ApiError | null {
  const option = request.query.get(DATES_OPTION)
  if (option === undefined || option === 'iso' || option === 'ms') return null
  return wrongParameter(`dates must be 'iso' (ISO 8601 text) or 'ms' (/Date(ms)/, the default), not '${option.slice(0, 40)}'`)
}
