/*
 * The generic resource endpoints, driven entirely by the declarations:
 *
 *   GET    /{path}                  list ($filter, $orderby, $top, $skip, $inlinecount, append, no_expand)
 *   POST   /{path}                  create
 *   GET    /{path}/$count           number of matching records (text/plain); a count, summary or list has a weak ETag
 *   GET    /{path}/$metadata        the metadata document
 *   GET    /{path}/$dummy           a random sample object
 *   GET    /{path}/summary          summary=[<groupedBy>;]<fn>[;…] with $filter
 *   GET    /{path}/@deleted         trashed objects;  GET /{path}/{id}/@deleted  one of them
 *   GET    /{path}/@{view}          a view (views.ts)
 *   GET    /{path}/${selection}     a view named as an operation (`$unbilled`), or its summary (`$unbilledsummary`)
 *   GET    /{path}/{id}             read;  PUT update;  PATCH update by a JSON Merge Patch (domain/mergePatch.ts);
 *                                   DELETE to the trash (?hard=true: for good)
 *                                   (ETag and If-None-Match on reads, If-Match on changes: etag.ts, etagPreconditions.ts)
 *          /{path}/@self|@own/…     the caller's user, the account: an alias of the id (domain/selfAlias.ts)
 *   POST   /{path}/{id}/$set        set fields from the query
 *   *      /{path}/{id}/{inner}/…   an inner collection (children whose reference is the id): every
 *                                   endpoint here again, on the parent's children (CollectionAt below)
 *   GET    /{path}/@{view}/summary  a view summed up;  /{path}/@{view}/$count  counted
 *   *      /{path}/{id}/${action}   a resource action (actions.ts)
 *
 * Every list (views, trash and inner collections too) and every summary is
 * also a CSV or XLSX file on `format=csv|xlsx` or `Accept: text/csv` (export/).
 */
import { ApiError, notFound, wrongParameter } from '../../domain/errors.js'
import { checkPasswordLength, hashPassword } from '../../domain/credentials.js'
import { readFields, readVersion, type ValueSource } from '../../domain/input.js'
import { mergePatchFields } from '../../domain/mergePatch.js'
import { metadataOf } from '../../domain/metadata.js'
import { dummyOf } from '../../domain/dummy.js'
import { createObject } from '../../domain/operations/createObject.js'
import { checkRemovable, deleteObject } from '../../domain/operations/deleteObject.js'
import { checkExpectedVersion } from '../../domain/operations/expectedVersion.js'
import { findVisible } from '../../domain/operations/findVisible.js'
import { objectHistory } from './history.js'
import { fieldsFromText, setFields as setObjectFields } from '../../domain/operations/setFields.js'
import { updateObject } from '../../domain/operations/updateObject.js'
import { CURRENT_PASSWORD_FIELD } from '../../domain/passwordRules.js'
import { renderedJsonOf } from '../../domain/renderedJson.js'
import { aliasedId, isSelfAlias } from '../../domain/selfAlias.js'
import { renderList, renderRecord, renderShown, type OutObject, type RenderOptions } from '../../domain/render.js'
import type { JsonFragment } from '../../json/fragment.js'
import { resourceByType } from '../../domain/resources/index.js'
import type { InnerCollection, Rec, ResourceDecl } from '../../domain/schema.js'
import type { Steps } from '../../domain/steps.js'
import type { TenantView } from '../../domain/tx.js'
import { andThen, type MaybePromise } from '../../maybePromise.js'
import { isChildOf, planList, type ListPlan, type ListScope, type ParentLink } from '../../query/plan.js'
import { parseSummary, summaryOfRowsSteps, type SummaryPlan } from '../../query/summary.js'
import { parseObjectBody } from '../body.js'
import { listCondition, withObjectEtag } from '../etag.js'
import { ifMatchOf } from '../etagPreconditions.js'
import { listPagingOf, pagingHeaders, type ListPaging } from '../paging.js'
import type { Call, Principal } from '../call.js'
import { DATES_OPTION, jsonDateFormOf } from '../jsonDates.js'
import { queryFlag } from '../request.js'
import { dataResponse, formatOf, textResponse, type ApiResponse } from '../response.js'
import { findAction } from './actions.js'
import { findView, findViewSummary, viewScope } from './views.js'
import { writeOptionsOf } from './writeOptions.js'
import { writeCheckOf } from './resourceWriteChecks.js'
import type { WriteCheck } from './writeCheck.js'
import { requireSession } from '../requireSession.js'
import { withKnownPassword } from './passwordProof.js'
import { exportOf } from '../export/exportAnswer.js'
import type { ExportFormat } from '../export/exportFormat.js'
import { listExport } from '../export/recordTable.js'
import { summaryExport } from '../export/summaryTable.js'

const METHODS_ON_COLLECTION = ['GET', 'POST']
const METHODS_ON_ITEM = ['GET', 'PUT', 'PATCH', 'DELETE']

export class MethodNotAllowed extends ApiError {
  constructor(method: string, allowed: readonly string[]) {
    super('TL01-9004', `${method} is not allowed here; use ${allowed.join(', ')}`, null, [], { Allow: allowed.join(', ') })
  }
}

/** The `append` counters the request asks for; 400 for one the resource does not offer. */
function appendedCounters(call: Call, decl: ResourceDecl): ResourceDecl['appends'] {
  const appendText = call.request.query.get('append')
  const counters = appendText === undefined || appendText === '' ? [] : appendText.split(',').map((name) => name.trim())
  return counters.map((name) => {
    const counter = decl.appends.find((candidate) => candidate.name === name)
    if (counter === undefined) {
      const offered = decl.appends.map((candidate) => candidate.name).join(', ') || 'none'
      throw wrongParameter(`append '${name}' does not apply to ${decl.type} (offered: ${offered})`)
    }
    return counter
  })
}

/** The render options of the request with its counters already read (appendedCounters), against `state`. */
function renderOptionsWith(call: Call, decl: ResourceDecl, state: TenantView, declared: ResourceDecl['appends']): RenderOptions {
  /** Counters are shown as the caller sees them (a personal project counts only for its owner). */
  const viewerId = requireSession(call).principal.userId
  // Dates as `/Date(ms)/` text already unless the answer is XML or asks for ISO dates (OutDate then: jsonDates.ts).
  const options: RenderOptions = { noExpand: queryFlag(call.request, 'no_expand'), jsonDates: formatOf(call.request) !== 'xml' && jsonDateFormOf(call.request) === 'ms' }
  if (declared.length > 0) {
    options.counters = (rec: Rec) => {
      const values: Record<string, number> = {}
      for (const counter of declared) values[counter.field] = state.aggregates.count(decl.type, counter.name, rec.id, viewerId)
      return values
    }
  }
  return options
}

function renderOptions(call: Call, decl: ResourceDecl, state: TenantView): RenderOptions {
  return renderOptionsWith(call, decl, state, appendedCounters(call, decl))
}

/** The render options of an answer that shows records; in JSON with `/Date(ms)/` dates with the text kept across answers (renderedJson.ts). */
function shownOptions(call: Call, decl: ResourceDecl, state: TenantView): RenderOptions {
  const options = renderOptions(call, decl, state)
  if (options.jsonDates === true && formatOf(call.request) === 'json') options.renderedJson = renderedJsonOf(state)
  return options
}

/** A list answer; in JSON its rows and referenced objects are JSON text kept across answers (renderedJson.ts). */
function listResponse(call: Call, decl: ResourceDecl, state: TenantView, recs: readonly Rec[]): ApiResponse {
  const out = renderList(decl, recs, state, shownOptions(call, decl, state))
  return dataResponse(call.request, out, { root: decl.xmlListName, item: decl.xmlItemName })
}

function objectResponse(call: Call, decl: ResourceDecl, out: OutObject | JsonFragment, status = 200): ApiResponse {
  return dataResponse(call.request, out, { root: decl.xmlItemName }, status)
}

/** How a body names the values it writes: the fields of a create or a PUT, or a PATCH's JSON Merge Patch (domain/mergePatch.ts). */
type BodyForm = 'create' | 'update' | 'mergePatch'

/**
 * Reads a body into field values, hashing passwords first (that is slow, so it happens outside the mailbox); `body`
 * is the body as sent (what else it says: a `currentPassword`).
 */
async function readBodyValues(
  call: Call,
  decl: ResourceDecl,
  form: BodyForm,
): Promise<{ values: Record<string, unknown>; version: number | null; source: ValueSource; body: Record<string, unknown> }> {
  const { value, source } = parseObjectBody(call.request, { mergePatch: form === 'mergePatch' })
  const values = form === 'mergePatch' ? mergePatchFields(decl, value, source) : readFields(decl, value, source, form === 'create')
  for (const fieldDecl of decl.fields) {
    const plain = values[fieldDecl.name]
    if (!fieldDecl.hashed || plain === undefined || plain === null) continue
    checkPasswordLength(plain, decl.type, fieldDecl.name)
    values[fieldDecl.name] = await hashPassword(plain, call.services.config.passwordCost)
  }
  return { values, version: readVersion(value, source), source, body: value }
}

/**
 * The session an update is made in: with the proof of the caller's password when the update sets a hashed field (a
 * password) of the caller's own record and the body gives `currentPassword` (passwordProof.ts; the domain decides
 * whether the change needs it: domain/passwordRules.ts).
 */
async function updateSession(call: Call, decl: ResourceDecl, id: string, principal: Principal, values: Record<string, unknown>, body: Record<string, unknown>) {
  const setsHashed = decl.fields.some((fieldDecl) => fieldDecl.hashed && values[fieldDecl.name] !== undefined)
  return setsHashed ? withKnownPassword(call, principal, id, body[CURRENT_PASSWORD_FIELD]) : principal
}

/**
 * The answer to a create or update, rendered after the write: `{id, version}`, or with `response_object` the stored
 * object as a read after the write shows it. The counters `append` asks for are read before the write (400 refuses
 * the request, not half of it); null when the answer needs none.
 */
function writtenCounters(call: Call, decl: ResourceDecl): ResourceDecl['appends'] | null {
  return queryFlag(call.request, 'response_object') ? appendedCounters(call, decl) : null
}

function writeAnswer(call: Call, decl: ResourceDecl, rec: Rec, status: number, counters: ResourceDecl['appends'] | null): MaybePromise<ApiResponse> {
  if (counters === null) return withObjectEtag(call.request, rec.version, objectResponse(call, decl, { id: rec.id, version: rec.version }, status))
  return requireSession(call).tenant.read((state) =>
    withObjectEtag(call.request, rec.version, objectResponse(call, decl, renderRecord(decl, rec, state, renderOptionsWith(call, decl, state, counters)), status)),
  )
}

/*
 * The reads below run in slices (TenantAccess.readInSlices). Their steps are
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

function list(call: Call, decl: ResourceDecl, scope: ListScope): MaybePromise<ApiResponse> {
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

/** A list-like answer with its tag (etag.ts: listCondition), when it has one and succeeded. */
function tagged(response: ApiResponse, etag: string | null): ApiResponse {
  if (etag !== null && response.status === 200) response.headers.ETag = etag
  return response
}

function count(call: Call, decl: ResourceDecl, scope: ListScope): MaybePromise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const plan = planList(decl, call.request.query)
  return tenant.readInSlices((state) => countSteps(call, plan, principal, scope, state))
}

function* summaryAnswerSteps(call: Call, decl: ResourceDecl, plan: ListPlan, summaryPlan: SummaryPlan, principal: Principal, scope: ListScope, state: TenantView, format: ExportFormat | null): Steps<ApiResponse> {
  const { etag, notModified } = listCondition(call.request, state.seq, principal.userId)
  if (notModified !== null) return notModified
  const entries = yield* summaryOfRowsSteps(summaryPlan, (visit) => plan.eachMatchingRow(state, principal, scope, visit), state)
  if (format !== null) return tagged(summaryExport(format, `${decl.xmlListName}-summary`, state, summaryPlan, entries), etag)
  return tagged(dataResponse(call.request, entries, { root: 'summaries', item: 'summary' }), etag)
}

/** `summary?summary=[<groupedBy>;]<fn>[;…]` over the records a list with the same $filter would give (`defaultSummary` without the parameter). */
function summary(call: Call, decl: ResourceDecl, scope: ListScope, defaultSummary?: string): MaybePromise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const plan = planList(decl, call.request.query)
  const summaryPlan = parseSummary(decl, call.request.query.get('summary') ?? defaultSummary)
  const format = exportOf(call)
  return tenant.readInSlices((state) => summaryAnswerSteps(call, decl, plan, summaryPlan, principal, scope, state, format))
}

/** The record a write stores, once the resource's write check (resourceWriteChecks.ts) passed on it; a throw rolls the write back. */
function checked(call: Call, check: WriteCheck | undefined, rec: Rec): Rec {
  check?.record(call, rec)
  return rec
}

async function create(call: Call, decl: ResourceDecl, fixed: Record<string, unknown>): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  if (!decl.creatable) throw new ApiError('TL01-1103', `${decl.type} objects cannot be created here`)
  const { values } = await readBodyValues(call, decl, 'create')
  const derive = writeOptionsOf(call.request, decl)
  const counters = writtenCounters(call, decl)
  const check = writeCheckOf(decl)
  await check?.values(call, values)
  const rec = await tenant.write((tx) => checked(call, check, createObject(tx, principal, decl, Object.assign({}, values, fixed), derive)))
  return writeAnswer(call, decl, rec, 201, counters)
}

function read(call: Call, at: CollectionAt, id: string, inTrash: boolean): MaybePromise<ApiResponse> {
  const { decl } = at
  const { tenant } = requireSession(call)
  return tenant.read((state) => {
    const rec = findInside(state, call, at, id, inTrash)
    const shown = renderShown(decl, rec, state, shownOptions(call, decl, state))
    return withObjectEtag(call.request, rec.version, objectResponse(call, decl, shown), shown)
  })
}

/** PUT, and PATCH (`form` 'mergePatch'): the same update, its values read from the body each in its way. */
async function update(call: Call, decl: ResourceDecl, id: string, fixed: Record<string, unknown>, form: BodyForm): Promise<ApiResponse> {
  const { tenant, principal: caller } = requireSession(call)
  const { values, version, body } = await readBodyValues(call, decl, form)
  Object.assign(values, fixed)
  const principal = await updateSession(call, decl, id, caller, values, body)
  // version_ignore=true overwrites the object at whatever version it is, even when the body names one (ARCHITECTURE.md §4).
  const versionIgnored = queryFlag(call.request, 'version_ignore')
  const derive = writeOptionsOf(call.request, decl)
  const counters = writtenCounters(call, decl)
  // If-Match (etagPreconditions.ts) names the version too: then the body need not.
  const expected = ifMatchOf(call.request)
  const check = writeCheckOf(decl)
  await check?.values(call, values)
  const rec = await tenant.write((tx) => {
    if (expected !== null) checkExpectedVersion(tx.state, principal, decl, id, expected)
    return checked(call, check, updateObject(tx, principal, decl, id, values, versionIgnored ? null : version, !versionIgnored && expected === null, derive))
  })
  return writeAnswer(call, decl, rec, 200, counters)
}

/** `$set?field=value&…`: a PUT from query parameters; the version is checked only when the query names it (and not version_ignore). */
async function setFields(call: Call, decl: ResourceDecl, id: string, fixed: Record<string, unknown>): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const reserved = new Set(['token', 'format', 'callback', 'suppress_response_code', 'response_object', 'no_expand', 'version', 'version_ignore', 'method', 'apikey', DATES_OPTION])
  const values = Object.assign(fieldsFromText(decl, [...call.request.query].filter(([name]) => !reserved.has(name))), fixed)
  const versionText = call.request.query.get('version')
  const version = versionText === undefined || queryFlag(call.request, 'version_ignore') ? null : readVersion({ version: versionText }, 'text')
  const counters = appendedCounters(call, decl)
  const expected = ifMatchOf(call.request)
  const check = writeCheckOf(decl)
  await check?.values(call, values)
  const after = await tenant.write((tx) => {
    if (expected !== null) checkExpectedVersion(tx.state, principal, decl, id, expected)
    return checked(call, check, setObjectFields(tx, principal, decl, id, values, version))
  })
  return tenant.read((state) => withObjectEtag(call.request, after.version, objectResponse(call, decl, renderRecord(decl, after, state, renderOptionsWith(call, decl, state, counters)))))
}

async function remove(call: Call, decl: ResourceDecl, id: string): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const hard = queryFlag(call.request, 'hard')
  checkRemovable(decl)
  const expected = ifMatchOf(call.request)
  const { trashItemId } = await tenant.write((tx) => {
    if (expected !== null) checkExpectedVersion(tx.state, principal, decl, id, expected, hard)
    return deleteObject(tx, principal, decl, id, hard)
  })
  return objectResponse(call, decl, trashItemId === null ? { id, deleted: true } : { id, trashItem: { id: trashItemId } })
}

/**
 * Where a request's collection is: a resource path, or the inner collection
 * of one parent (`within`: its children, at `path` with the parent's id as
 * `{id}`, as `$metadata` names it). Every endpoint of the top comment works
 * on both; in an inner collection a list, count, summary, view or trash
 * list holds only the parent's children, an object of another parent is not
 * found, and a create or update keeps the reference to the parent.
 */
interface CollectionAt {
  decl: ResourceDecl
  within: ParentLink | null
  path: string
  /** Inner collections between the resource path and this one (0 at the resource path). */
  depth: number
}

/** Inner collections a path may go through (`users/{id}/projects/{id}/tasks/{id}/timerecords` goes through 3). */
const MAX_INNER_DEPTH = 4

/** Handles a request whose path starts with a resource path `path`; `rest` is what follows it. A read answers at once when it can (maybePromise.ts). */
export function handleResource(call: Call, decl: ResourceDecl, rest: readonly string[], path: string): MaybePromise<ApiResponse> {
  let at = TOP_LEVEL.get(path)
  if (at === undefined || at.decl !== decl) {
    at = { decl, within: null, path, depth: 0 }
    TOP_LEVEL.set(path, at)
  }
  return handleCollection(call, at, rest)
}

/** The collection at each declared resource path, made on its first request (a request allocates none). */
const TOP_LEVEL = new Map<string, CollectionAt>()

function allOf(at: CollectionAt): ListScope {
  return at.within === null ? ALL : { kind: 'children', via: at.within.via, parentId: at.within.parentId }
}

function trashedOf(at: CollectionAt): ListScope {
  return at.within === null ? TRASHED : { kind: 'trashed', within: at.within }
}

/** The reference an inner collection fixes on what is created or changed in it. */
function fixedOf(at: CollectionAt): Record<string, unknown> {
  if (at.within === null) return NOTHING_FIXED
  const { via, parentId } = at.within
  // A list of references (a time record's tags) holds the parent among its elements.
  return { [via]: at.decl.fieldsByName.get(via)?.list === true ? [parentId] : parentId }
}

/** What may follow a view's name: its summary or its count (anything else is an object path, `users/@self/…`). */
const VIEW_TAILS: ReadonlySet<string> = new Set(['summary', '$count'])
const ALL: ListScope = { kind: 'all' }
const TRASHED: ListScope = { kind: 'trashed' }
const NOTHING_FIXED: Record<string, unknown> = {}

function metadataAnswer(call: Call, at: CollectionAt): ApiResponse {
  return dataResponse(call.request, metadataOf(at.decl, at.within === null ? at.decl.path : at.path), { root: 'metadata' })
}

/** `/{path}/@{view}[/summary|/$count]`: the view's records, listed, summed up or counted. */
function viewAnswer(call: Call, at: CollectionAt, name: string, then: string | undefined): MaybePromise<ApiResponse> {
  const { decl } = at
  if (call.request.method !== 'GET') throw new MethodNotAllowed(call.request.method, ['GET'])
  let scope: ListScope
  if (name === '@deleted') scope = trashedOf(at)
  else {
    const view = findView(decl.type, name)
    if (view === undefined) throw new ApiError('TL01-9003', `unknown view '${name}' of ${decl.path ?? decl.type}`)
    scope = viewScope(view, requireSession(call).principal, at.within)
  }
  if (then === undefined) return list(call, decl, scope)
  if (then === 'summary') return summary(call, decl, scope)
  if (then === '$count') return count(call, decl, scope)
  throw new ApiError('TL01-9003', `no resource at this path`)
}

function handleCollection(call: Call, at: CollectionAt, rest: readonly string[]): MaybePromise<ApiResponse> {
  const { decl, within } = at
  const method = call.request.method
  const [first, second, ...more] = rest
  if (first === undefined) {
    if (method === 'GET') return list(call, decl, allOf(at))
    if (method === 'POST') {
      const action = findAction(decl.type, 'POST')
      return action === undefined ? create(call, decl, fixedOf(at)) : action.handle(call, decl, null, within)
    }
    throw new MethodNotAllowed(method, METHODS_ON_COLLECTION)
  }
  if (second === undefined && first.startsWith('$')) {
    requireSession(call)
    const action = findAction(decl.type, first)
    if (action !== undefined) return action.handle(call, decl, null, within)
    if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
    const selection = findView(decl.type, first)
    if (selection !== undefined) return list(call, decl, viewScope(selection, requireSession(call).principal, within))
    const summed = findViewSummary(decl.type, first)
    if (summed !== undefined) return summary(call, decl, viewScope(summed.view, requireSession(call).principal, within), summed.defaultSummary)
    if (first === '$count') return count(call, decl, allOf(at))
    if (first === '$metadata') return metadataAnswer(call, at)
    if (first === '$dummy') return objectResponse(call, decl, dummyOf(decl))
    throw new ApiError('TL01-9003', `unknown operation '${first}' on ${decl.path ?? decl.type}`)
  }
  if (first.startsWith('@') && isSelfAlias(decl.type, first)) {
    const { tenant, principal } = requireSession(call)
    return andThen(tenant.inspect((state) => aliasedId(state, decl.type, principal.userId)), (id) => {
      if (id === null) throw notFound(decl.type, first)
      return itemAt(call, at, id, second, more)
    })
  }
  if (first.startsWith('@') && (second === undefined || (VIEW_TAILS.has(second) && more.length === 0))) return viewAnswer(call, at, first, second)
  if (first === 'summary' && second === undefined) {
    if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
    return summary(call, decl, allOf(at))
  }
  return itemAt(call, at, first, second, more)
}

/** `/{path}/{id}[/…]` once the id is known (an alias resolved): in an inner collection, checked to be the parent's child first. */
function itemAt(call: Call, at: CollectionAt, id: string, second: string | undefined, more: readonly string[]): MaybePromise<ApiResponse> {
  // A GET of the object, and of its trashed form, check that themselves.
  const checkedByRead = second === '@deleted' || (second === undefined && call.request.method === 'GET')
  if (at.within !== null && !checkedByRead) return andThen(requireSession(call).tenant.read((state) => findInside(state, call, at, id, false)), () => handleItem(call, at, id, second, more))
  return handleItem(call, at, id, second, more)
}

/** A visible object of the collection (live, or with `inTrash` trashed): in an inner collection one of the parent's children; else 404. */
function findInside(state: TenantView, call: Call, at: CollectionAt, id: string, inTrash: boolean): Rec {
  const rec = findVisible(state, requireSession(call).principal, at.decl, id, inTrash)
  if (at.within !== null && !isChildOf(rec[at.within.via], at.within.parentId)) throw notFound(at.decl.type, id)
  return rec
}

/** `/{path}/{id}[/…]`: the object, an operation on it, or an inner collection of it. */
function handleItem(call: Call, at: CollectionAt, id: string, second: string | undefined, more: readonly string[]): MaybePromise<ApiResponse> {
  const { decl, within } = at
  const method = call.request.method
  if (second === undefined) {
    if (method === 'GET') return read(call, at, id, false)
    if (method === 'PUT') return update(call, decl, id, fixedOf(at), 'update')
    if (method === 'PATCH') return update(call, decl, id, fixedOf(at), 'mergePatch')
    if (method === 'DELETE') {
      const action = findAction(decl.type, 'DELETE')
      return action === undefined ? remove(call, decl, id) : action.handle(call, decl, id, within)
    }
    throw new MethodNotAllowed(method, METHODS_ON_ITEM)
  }
  const inner = decl.inner.find((candidate) => candidate.name === second)
  if (more.length > 0 && inner === undefined) throw new ApiError('TL01-9003', `no resource at this path`)
  if (second === '@deleted') {
    if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
    return read(call, at, id, true)
  }
  if (second === '$history') {
    if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
    return objectHistory(call, decl, id)
  }
  if (second === '$set') {
    if (method !== 'POST' && method !== 'PUT') throw new MethodNotAllowed(method, ['POST'])
    return setFields(call, decl, id, fixedOf(at))
  }
  if (second.startsWith('$')) {
    const action = findAction(decl.type, second)
    if (action === undefined) throw new ApiError('TL01-9003', `unknown operation '${second}' on ${decl.path ?? decl.type}`)
    return action.handle(call, decl, id, within)
  }
  if (inner === undefined) throw new ApiError('TL01-9003', `${decl.path ?? decl.type} has no inner collection '${second}'`)
  return innerCollection(call, at, id, inner, more)
}

/** `<collection>/<id>/<inner>[/…]`: the parent must be visible, then the rest is handled on its children. */
function innerCollection(call: Call, at: CollectionAt, id: string, inner: InnerCollection, rest: readonly string[]): MaybePromise<ApiResponse> {
  if (at.depth >= MAX_INNER_DEPTH) throw new ApiError('TL01-9003', `no resource at this path: at most ${MAX_INNER_DEPTH} inner collections deep`)
  const childDecl = resourceByType(inner.childType)
  const child: CollectionAt = { decl: childDecl, within: { via: inner.via, parentId: id }, path: `${at.path}/{id}/${inner.name}`, depth: at.depth + 1 }
  return andThen(requireSession(call).tenant.read((state) => findInside(state, call, at, id, false)), () => handleCollection(call, child, rest))
}
