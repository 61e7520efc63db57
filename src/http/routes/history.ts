/*
 * The history of an object and of the tenant (domain/history.ts says what an
 * item holds and who may read it):
 *
 *   GET /v1/<resource>/{id}/$history   the object's changes, newest first
 *   GET /v1/activity                   every change, newest first: owner and admins; `$filter` on user, resource,
 *                                      type, kind, at, seq, objectId; `format=csv` (or xlsx) downloads it
 *
 * Both answer `{availableFrom: {seq, at} | null, items: [...], next}`: the
 * oldest entry the log still holds (LOG_RETENTION_MS prunes older ones once
 * a snapshot covers them), the page, and the address of the next page
 * (`before=<seq>`, also in `Link`; null when the log holds nothing older).
 * A page holds `$top` items (HISTORY_DEFAULT_PAGE, at most HISTORY_MAX_PAGE;
 * an export up to ACTIVITY_EXPORT_MAX_ROWS), a few more when the last
 * entry read changed several of them, and fewer when the scan read its
 * bound of log entries first (tenants/changeHistory.ts): `next` then goes on
 * from there. The log is read in slices that let other requests through.
 */
import { accountOf } from '../../domain/account.js'
import type { Change } from '../../domain/changes.js'
import { changeVisibleTo } from '../../domain/changes.js'
import { ApiError, notFound, wrongParameter } from '../../domain/errors.js'
import { ACTIVITY_ITEM, activityRecordOf, historyItemOf, historyVisibleTo } from '../../domain/history.js'
import type { DisplayContext, ResourceDecl } from '../../domain/schema.js'
import { compiledFilter } from '../../query/compiledFilters.js'
import type { HistoryScan } from '../../tenants/changeHistory.js'
import type { TenantActor } from '../../tenants/tenantActor.js'
import type { Call } from '../call.js'
import { exportAnswer, exportOf } from '../export/exportAnswer.js'
import { plainTable, type PlainColumn } from '../export/plainTable.js'
import { targetWithParameter } from '../paging.js'
import { requireSession } from '../requireSession.js'
import { dataResponse, type ApiResponse } from '../response.js'

/** Items of a page when `$top` is not given. */
const HISTORY_DEFAULT_PAGE = 100
/** The most items `$top` may ask of a page. */
const HISTORY_MAX_PAGE = 1000
/** The most rows an export of the tenant's history (`format=csv`) holds, and its default. */
export const ACTIVITY_EXPORT_MAX_ROWS = 100_000

const XML_NAMES = { root: 'history', item: 'change' }

interface HistoryPage {
  readonly top: number
  readonly before: number | null
}

function positiveInteger(name: string, text: string, max: number): number {
  if (!/^[1-9][0-9]{0,15}$/.test(text) || Number(text) > max) throw wrongParameter(`${name} must be a whole number from 1 to ${max}, got '${text.slice(0, 32)}'`)
  return Number(text)
}

/** `$top` and `before` of a history request; 400 TL01-1105 for a bad value, before anything is read. */
function historyPageOf(query: ReadonlyMap<string, string>, maxTop: number, defaultTop: number): HistoryPage {
  const top = query.get('$top')
  const before = query.get('before')
  return {
    top: top === undefined ? defaultTop : positiveInteger('$top', top, maxTop),
    before: before === undefined ? null : positiveInteger('before', before, Number.MAX_SAFE_INTEGER),
  }
}

function actorOf(call: Call): TenantActor {
  const actor = call.services.registry.get(call.tenantName ?? '')
  if (actor === undefined) throw new ApiError('TL01-1005', `there is no account at '${call.tenantName ?? ''}'`)
  return actor
}

/** The answer's body and headers (see the top). */
function historyAnswer(call: Call, scan: HistoryScan, items: readonly unknown[]): ApiResponse {
  const next = scan.before === null ? null : targetWithParameter(call.request, 'before', String(scan.before))
  const availableFrom = scan.availableFrom === null ? null : { seq: scan.availableFrom.seq, at: `/Date(${scan.availableFrom.atMs})/` }
  return dataResponse(call.request, { availableFrom, items, next }, XML_NAMES, 200, next === null ? {} : { Link: `<${next}>; rel="next"` })
}

/** GET /v1/<resource>/{id}/$history (see the top). */
export async function objectHistory(call: Call, decl: ResourceDecl, id: string): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const page = historyPageOf(call.request.query, HISTORY_MAX_PAGE, HISTORY_DEFAULT_PAGE)
  const found: Change[] = []
  const scan = await actorOf(call).changes.history(page.before, (changes) => {
    for (const change of changes) if (change.id === id && change.decl.type === decl.type) found.push(change)
    return found.length >= page.top
  })
  return tenant.read((state) => {
    if (!historyVisibleTo(principal, decl, state.get(decl.type, id), found[0] ?? null, state)) throw notFound(decl.type, id)
    const items = found.map((change, at) => historyItemOf(change, state, found[at + 1]?.rec ?? null))
    return historyAnswer(call, scan, items)
  })
}

/** The columns of the tenant's history as a file. */
const ACTIVITY_COLUMNS: readonly PlainColumn[] = [
  { header: 'seq', kind: 'number' },
  { header: 'at', kind: 'date' },
  { header: 'userId', kind: 'text' },
  { header: 'user', kind: 'text' },
  { header: 'userKnown', kind: 'boolean' },
  { header: 'kind', kind: 'text' },
  { header: 'resource', kind: 'text' },
  { header: 'type', kind: 'text' },
  { header: 'id', kind: 'text' },
  { header: 'version', kind: 'number' },
  { header: 'changes', kind: 'text' },
]

/** An item as a row of the file: the user by id and display name, the changed fields as JSON text. */
function activityRow(change: Change, item: Record<string, unknown>): Record<string, string | number | boolean | null> {
  const user = item.user as { id: string; displayName?: unknown } | null
  return {
    seq: change.seq,
    at: change.atMs,
    userId: user?.id ?? null,
    user: typeof user?.displayName === 'string' ? user.displayName : null,
    userKnown: item.userKnown as boolean,
    kind: change.kind,
    resource: item.resource as string | null,
    type: change.decl.type,
    id: change.id,
    version: item.version as number | null,
    changes: item.changes === null ? null : JSON.stringify(item.changes),
  }
}

/** GET /v1/activity (see the top). */
export async function activity(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  if (!principal.superuser) throw new ApiError('TL01-1008', 'the history of the account is for its owner and its admins')
  const format = exportOf(call)
  const page = format === null ? historyPageOf(call.request.query, HISTORY_MAX_PAGE, HISTORY_DEFAULT_PAGE) : historyPageOf(call.request.query, ACTIVITY_EXPORT_MAX_ROWS, ACTIVITY_EXPORT_MAX_ROWS)
  const filterText = call.request.query.get('$filter')
  const filter = filterText === undefined || filterText === '' ? null : compiledFilter(ACTIVITY_ITEM, filterText)
  // The state the filter and each change's audience are judged on: the tenant's, as it is while the log is read.
  const context: DisplayContext = await tenant.inspect((state) => state)
  const found: Change[] = []
  const scan = await actorOf(call).changes.history(page.before, (changes) => {
    for (const change of changes) {
      if (filter !== null && !filter.test(activityRecordOf(change), context)) continue
      if (changeVisibleTo(principal, change, context)) found.push(change)
    }
    return found.length >= page.top
  })
  return tenant.read((state) => {
    const items = found.map((change) => historyItemOf(change, state))
    if (format === null) return historyAnswer(call, scan, items)
    const rows = found.map((change, at) => activityRow(change, items[at] as Record<string, unknown>))
    const answer = exportAnswer(format, plainTable('activity', String(accountOf(state).timeZone ?? 'UTC'), ACTIVITY_COLUMNS, rows))
    if (scan.before !== null) {
      const next = targetWithParameter(call.request, 'before', String(scan.before))
      if (next !== null) answer.headers.Link = `<${next}>; rel="next"`
    }
    return answer
  })
}
