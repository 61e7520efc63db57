/*
 * Lists, counts and summaries of a collection (all of it, a view, the trash,
 * or an inner collection's: the ListScope), each tagged for If-None-Match
 * (etag.ts: listCondition) and, as a list or summary, also a CSV or XLSX
 * file (export/). They run in slices (TenantAccess.readInSlices).
 */
import { parseSummary, summaryOfBlocksSteps, type SummaryPlan } from '../../query/summary.js'
import { planList, type ListPlan, type ListScope } from '../../query/plan.js'
import type { ResourceDecl } from '../../domain/schema.js'
import type { Steps } from '../../domain/steps.js'
import type { TenantView } from '../../domain/tx.js'
import type { MaybePromise } from '../../maybePromise.js'
import type { Call, Principal } from '../call.js'
import { listCondition } from '../etag.js'
import { listPagingOf, pagingHeaders, type ListPaging } from '../paging.js'
import { requireSession } from '../requireSession.js'
import { dataResponse, textResponse, type ApiResponse } from '../response.js'
import { exportOf } from '../export/exportAnswer.js'
import type { ExportFormat } from '../export/exportFormat.js'
import { listExport } from '../export/recordTable.js'
import { summaryExport } from '../export/summaryTable.js'
import { appendedCounters, listResponse, renderOptionsWith, tagged } from './resourceAnswers.js'

/*
 * The reads here run in slices (TenantAccess.readInSlices). Their steps are
 * module-level generator functions called from an arrow: creating a
 * generator closure per request cost 4–7 µs here (Node 20), a fifth of a
 * `users/@self`.
 */

/** A list page, with its tag (304 before any work when `If-None-Match` names it, etag.ts) and paging headers (paging.ts). */
function* listSteps(call: Call, decl: ResourceDecl, plan: ListPlan, paging: ListPaging, principal: Principal, scope: ListScope, state: TenantView): Steps<ApiResponse> {
  const { etag, notModified } = listCondition(call.request, state.seq, principal.userId)
  if (notModified !== null) return notModified
  const recs = yield* plan.runSteps(state, principal, scope)
  const total = paging.inlineCount ? yield* plan.countSteps(state, principal, scope) : null
  const response = listResponse(call, decl, state, recs)
  if (response.status !== 200) return response
  Object.assign(response.headers, pagingHeaders(call.request, paging.paging, recs.length, total), etag === null ? null : { ETag: etag })
  return response
}

export function list(call: Call, decl: ResourceDecl, scope: ListScope): MaybePromise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const format = exportOf(call)
  if (format !== null) {
    const counters = appendedCounters(call, decl)
    return listExport(call, decl, scope, format, new Set(counters.map((counter) => counter.field)), (state) => renderOptionsWith(call, decl, state, counters))
  }
  const plan = planList(decl, call.request.query)
  const paging = listPagingOf(call.request.query)
  return tenant.readInSlices((state) => listSteps(call, decl, plan, paging, principal, scope, state))
}

function* countSteps(call: Call, plan: ListPlan, principal: Principal, scope: ListScope, state: TenantView): Steps<ApiResponse> {
  const { etag, notModified } = listCondition(call.request, state.seq, principal.userId)
  if (notModified !== null) return notModified
  return tagged(textResponse(call.request, String(yield* plan.countSteps(state, principal, scope))), etag)
}

export function count(call: Call, decl: ResourceDecl, scope: ListScope): MaybePromise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const plan = planList(decl, call.request.query)
  return tenant.readInSlices((state) => countSteps(call, plan, principal, scope, state))
}

function* summaryAnswerSteps(
  call: Call,
  decl: ResourceDecl,
  plan: ListPlan,
  summaryPlan: SummaryPlan,
  principal: Principal,
  scope: ListScope,
  state: TenantView,
  format: ExportFormat | null,
): Steps<ApiResponse> {
  const { etag, notModified } = listCondition(call.request, state.seq, principal.userId)
  if (notModified !== null) return notModified
  const entries = yield* summaryOfBlocksSteps(summaryPlan, (visit) => plan.eachMatchingBlock(state, principal, scope, visit), state)
  if (format !== null) return tagged(summaryExport(format, `${decl.xmlListName}-summary`, state, summaryPlan, entries), etag)
  return tagged(dataResponse(call.request, entries, { root: 'summaries', item: 'summary' }), etag)
}

/** `summary?summary=[<groupedBy>;]<fn>[;…]` over the records a list with the same $filter would give (`defaultSummary` without the parameter). */
export function summary(call: Call, decl: ResourceDecl, scope: ListScope, defaultSummary?: string): MaybePromise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const plan = planList(decl, call.request.query)
  const summaryPlan = parseSummary(decl, call.request.query.get('summary') ?? defaultSummary)
  const format = exportOf(call)
  return tenant.readInSlices((state) => summaryAnswerSteps(call, decl, plan, summaryPlan, principal, scope, state, format))
}
