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
import { queryPartName, type ApiRequest } from './request.js'
import { normalizedPath } from './requestTarget.js'

/** Whether the list is asked for its total count: `$inlinecount=allpages`; 400 for a value other than it or `none`. */
function inlineCountRequested(query: ReadonlyMap<string, string>): boolean {
  const value = query.get('$inlinecount')
  if (value === undefined || value === 'none') return false
  if (value === 'allpages') return true
  throw wrongParameter(`$inlinecount must be 'allpages' or 'none', got '${value.slice(0, 32)}'`)
}

/** Characters a URI in a Link header cannot carry as they are (they would end the <…>, or the header). */
const NOT_IN_LINK = /[^\x21-\x7e]|[<>"\\^`{|}]/g

/** Query parameters that carry a credential: never repeated in a link. */
const CREDENTIAL_PARAMETERS: ReadonlySet<string> = new Set(['token', 'apikey', 'refresh_token'])

/** The request's target without `$skip` and credentials, escaped for a Link: what every link of its page starts from. */
interface LinkBase {
  /** The path, and the kept parameters of the query ('' for none). */
  readonly path: string
  readonly kept: string
}

function linkBase(request: ApiRequest): LinkBase {
  let kept = ''
  for (const part of request.rawQuery.split('&')) if (part !== '' && !namesLeftOut(part)) kept = kept === '' ? part : `${kept}&${part}`
  return { path: inLink(normalizedPath(request)), kept: inLink(kept) }
}

/** The text with the characters a Link's URI cannot carry percent-encoded. */
function inLink(text: string): string {
  return text.replace(NOT_IN_LINK, (char) => encodeURIComponent(char))
}

/** The request's target with `$skip` set to `skip` (0: left out), every other parameter but credentials as written. */
function targetWithSkip({ path, kept }: LinkBase, skip: number): string {
  const query = skip === 0 ? kept : kept === '' ? `$skip=${skip}` : `${kept}&$skip=${skip}`
  return query === '' ? path : `${path}?${query}`
}

/** Whether a raw `name=value` part of a query names `$skip` or a credential, read as parseQuery reads it (`%24skip`, `%74oken` too). */
function namesLeftOut(part: string): boolean {
  const name = queryPartName(part)
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
  const full = paging.top > 0 && returned >= paging.top
  const next = full && (total === null || paging.skip + returned < total)
  const prev = paging.skip > 0 && paging.top > 0
  if (!next && !prev) return headers
  const base = linkBase(request)
  const links: string[] = []
  if (next) links.push(`<${targetWithSkip(base, paging.skip + paging.top)}>; rel="next"`)
  if (prev) links.push(`<${targetWithSkip(base, Math.max(0, paging.skip - paging.top))}>; rel="prev"`)
  headers.Link = links.join(', ')
  return headers
}

/** What a list request asks of its paging: the page, and whether the total is counted. */
export interface ListPaging {
  readonly paging: Paging
  readonly inlineCount: boolean
}

/**
 * The request's target with the query parameter `name` set to `value` instead (every other parameter but
 * credentials as written), for a Link: a cursor's next page. Null for a batch item, which has no address.
 */
export function targetWithParameter(request: ApiRequest, name: string, value: string): string | null {
  if (request.addressPrefix === null) return null
  const path = inLink(normalizedPath(request))
  let kept = ''
  for (const part of request.rawQuery.split('&')) {
    if (part === '' || CREDENTIAL_PARAMETERS.has(queryPartName(part)) || queryPartName(part) === name) continue
    kept = kept === '' ? part : `${kept}&${part}`
  }
  const set = `${encodeURIComponent(name)}=${encodeURIComponent(value)}`
  return `${path}?${inLink(kept === '' ? set : `${kept}&${set}`)}`
}

/** The paging of a list request, read before the list runs (a bad value is 400 before any work). */
export function listPagingOf(query: ReadonlyMap<string, string>): ListPaging {
  return { paging: parsePaging(query), inlineCount: inlineCountRequested(query) }
}
