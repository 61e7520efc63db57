/*
 * Paging headers of a list answer; the body stays the array it always was.
 *
 * `$inlinecount=allpages` (OData v2; `none` is the default) asks for the
 * number of records of the whole list — every page, the same filter, view
 * and scope — in `X-Total-Count`. It is counted in the same read as the page
 * (one state), on the count path of `$count` (ListPlan.countSteps): a pass
 * over the candidates with the filter, no sorting, no rendering.
 *
 * `Link` (RFC 8288) gives the neighbouring pages as the same request with
 * `$skip` moved by the page size: `rel="next"` when the page is full (it
 * holds `$top` records; with the total known, only when records are left
 * after it), `rel="prev"` when `$skip` is above 0 (and `$top` is). The targets are
 * root-relative (`</v1/…?…&$skip=40>`, or `</tenant/acme/v1/…>` for a
 * request that named its tenant in the path: requestTarget.ts): the client
 * resolves them against the address it called, whatever proxy or scheme is
 * in front. Every other parameter of the query is kept as the client wrote
 * it, except credentials (CREDENTIAL_PARAMETERS: the token, the API key):
 * a link is a URL, and URLs end up in logs, histories and Referer headers;
 * the client sends its credential with the next page as it did with this
 * one. A batch item has no address of its own, and no `Link`.
 */
import { wrongParameter } from '../domain/errors.js'
import { parsePaging, type Paging } from '../query/listQuery.js'
import type { ApiRequest } from './request.js'
import { normalizedPath } from './requestTarget.js'

/** Whether the list is asked for its total count: `$inlinecount=allpages`; 400 for a value other than it or `none`. */
export function inlineCountRequested(query: ReadonlyMap<string, string>): boolean {
  const value = query.get('$inlinecount')
  if (value === undefined || value === 'none') return false
  if (value === 'allpages') return true
  throw wrongParameter(`$inlinecount must be 'allpages' or 'none', got '${value.slice(0, 32)}'`)
}

/** Characters a URI in a Link header cannot carry as they are (they would end the <…>, or the header). */
const NOT_IN_LINK = /[^\x21-\x7e]|[<>"\\^`{|}]/g

/** Query parameters that carry a credential: never repeated in a link. */
export const CREDENTIAL_PARAMETERS: ReadonlySet<string> = new Set(['token', 'apikey', 'refresh_token'])

/** The request's target with `$skip` set to `skip` (0: left out), every other parameter but credentials as written. */
function targetWithSkip(request: ApiRequest, skip: number): string {
  const path = normalizedPath(request)
  const kept = request.rawQuery.split('&').filter((part) => part !== '' && !namesLeftOut(part))
  if (skip > 0) kept.push(`$skip=${skip}`)
  const whole = kept.length === 0 ? path : `${path}?${kept.join('&')}`
  return whole.replace(NOT_IN_LINK, (char) => encodeURIComponent(char))
}

/** Whether a raw `name=value` part of a query names `$skip` or a credential, read as parseQuery reads it (`%24skip`, `%74oken` too). */
function namesLeftOut(part: string): boolean {
  const name = new URLSearchParams(part).keys().next().value ?? ''
  return name === '$skip' || CREDENTIAL_PARAMETERS.has(name)
}

/**
 * The paging headers of a list page that returned `returned` records: `X-Total-Count` when `total` is known, `Link`
 * to the next and previous pages.
 */
export function pagingHeaders(request: ApiRequest, paging: Paging, returned: number, total: number | null): Record<string, string> {
  const headers: Record<string, string> = {}
  if (total !== null) headers['X-Total-Count'] = String(total)
  if (request.addressPrefix === null) return headers
  const links: string[] = []
  const full = paging.top > 0 && returned >= paging.top
  if (full && (total === null || paging.skip + returned < total)) links.push(`<${targetWithSkip(request, paging.skip + paging.top)}>; rel="next"`)
  if (paging.skip > 0 && paging.top > 0) links.push(`<${targetWithSkip(request, Math.max(0, paging.skip - paging.top))}>; rel="prev"`)
  if (links.length > 0) headers.Link = links.join(', ')
  return headers
}

/** What a list request asks of its paging: the page, and whether the total is counted. */
export interface ListPaging {
  readonly paging: Paging
  readonly inlineCount: boolean
}

/** The paging of a list request, read before the list runs (a bad value is 400 before any work). */
export function listPagingOf(query: ReadonlyMap<string, string>): ListPaging {
  return { paging: parsePaging(query), inlineCount: inlineCountRequested(query) }
}
