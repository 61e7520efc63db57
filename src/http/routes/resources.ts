/*
 * The generic resource endpoints, driven entirely by the declarations:
 *
 *   GET    /{path}                  list ($filter, $orderby, $top, $skip, append, no_expand)
 *   POST   /{path}                  create
 *   GET    /{path}/$count           number of matching records (text/plain)
 *   GET    /{path}/$metadata        the metadata document
 *   GET    /{path}/$dummy           a random sample object
 *   GET    /{path}/summary          summary=[<groupedBy>;]<fn>[;…] with $filter
 *   GET    /{path}/@deleted         trashed objects;  GET /{path}/{id}/@deleted  one of them
 *   GET    /{path}/@{view}          a view (views.ts)
 *   GET    /{path}/{id}             read;  PUT update;  DELETE to the trash (?hard=true: for good)
 *   POST   /{path}/{id}/$set        set fields from the query
 *   GET|POST /{path}/{id}/{inner}   an inner collection (children whose reference is the id)
 *   *      /{path}/{id}/${action}   a resource action (actions.ts)
 */
import { ApiError, wrongParameter } from '../../domain/errors.js'
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../domain/credentials.js'
import { readFields, readVersion, type ValueSource } from '../../domain/input.js'
import { metadataOf } from '../../domain/metadata.js'
import { dummyOf } from '../../domain/dummy.js'
import { createObject } from '../../domain/operations/createObject.js'
import { checkRemovable, deleteObject } from '../../domain/operations/deleteObject.js'
import { findVisible } from '../../domain/operations/findVisible.js'
import { fieldsFromText, setFields as setObjectFields } from '../../domain/operations/setFields.js'
import { updateObject } from '../../domain/operations/updateObject.js'
import { renderedJsonOf } from '../../domain/renderedJson.js'
import { renderList, renderRecord, renderShown, type OutObject, type RenderOptions } from '../../domain/render.js'
import type { JsonFragment } from '../../json/fragment.js'
import { resourceByType } from '../../domain/resources/index.js'
import type { InnerCollection, Rec, ResourceDecl } from '../../domain/schema.js'
import type { Steps } from '../../engine/steps.js'
import type { TenantState } from '../../engine/tenantState.js'
import { andThen, type MaybePromise } from '../../maybePromise.js'
import { planList, type ListPlan, type ListScope } from '../../query/plan.js'
import { parseSummary, summarySteps, type SummaryPlan } from '../../query/summary.js'
import { parseObjectBody } from '../body.js'
import type { Call, Principal } from '../call.js'
import { queryFlag } from '../request.js'
import { dataResponse, formatOf, textResponse, type ApiResponse } from '../response.js'
import { findAction } from './actions.js'
import { findView, viewScope } from './views.js'
import { writeOptionsOf } from './writeOptions.js'
import { requireSession } from '../requireSession.js'

const METHODS_ON_COLLECTION = ['GET', 'POST']
const METHODS_ON_ITEM = ['GET', 'PUT', 'DELETE']

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
function renderOptionsWith(call: Call, decl: ResourceDecl, state: TenantState, declared: ResourceDecl['appends']): RenderOptions {
  /** Counters are shown as the caller sees them (a personal project counts only for its owner). */
  const viewerId = requireSession(call).principal.userId
  const options: RenderOptions = { noExpand: queryFlag(call.request, 'no_expand'), jsonDates: formatOf(call.request) !== 'xml' }
  if (declared.length > 0) {
    options.counters = (rec: Rec) => {
      const values: Record<string, number> = {}
      for (const counter of declared) values[counter.field] = state.counters.count(decl.type, counter.name, rec.id, viewerId)
      return values
    }
  }
  return options
}

function renderOptions(call: Call, decl: ResourceDecl, state: TenantState): RenderOptions {
  return renderOptionsWith(call, decl, state, appendedCounters(call, decl))
}

/** The render options of an answer that shows records; in JSON with the text kept across answers (renderedJson.ts). */
function shownOptions(call: Call, decl: ResourceDecl, state: TenantState): RenderOptions {
  const options = renderOptions(call, decl, state)
  if (formatOf(call.request) === 'json') options.renderedJson = renderedJsonOf(state)
  return options
}

/** A list answer; in JSON its rows and referenced objects are JSON text kept across answers (renderedJson.ts). */
function listResponse(call: Call, decl: ResourceDecl, state: TenantState, recs: readonly Rec[]): ApiResponse {
  const out = renderList(decl, recs, state, shownOptions(call, decl, state))
  return dataResponse(call.request, out, { root: decl.xmlListName, item: decl.xmlItemName })
}

function objectResponse(call: Call, decl: ResourceDecl, out: OutObject | JsonFragment, status = 200): ApiResponse {
  return dataResponse(call.request, out, { root: decl.xmlItemName }, status)
}

/** Reads a body into field values, hashing passwords first (that is slow, so it happens outside the mailbox). */
async function readBodyValues(call: Call, decl: ResourceDecl, creating: boolean): Promise<{ values: Record<string, unknown>; version: number | null; source: ValueSource }> {
  const { value, source } = parseObjectBody(call.request)
  const values = readFields(decl, value, source, creating)
  for (const fieldDecl of decl.fields) {
    const plain = values[fieldDecl.name]
    if (!fieldDecl.hashed || plain === undefined || plain === null) continue
    if (typeof plain !== 'string' || plain.length < MIN_PASSWORD_LENGTH || plain.length > MAX_PASSWORD_LENGTH) {
      throw new ApiError('TL01-1104', `${decl.type}.${fieldDecl.name} must have ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`, null, [
        { entityType: decl.type, field: fieldDecl.name, constraint: 'Size', message: `${decl.type}.${fieldDecl.name} must have ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters` },
      ])
    }
    values[fieldDecl.name] = await hashPassword(plain, call.services.config.passwordCost)
  }
  return { values, version: readVersion(value, source), source }
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
  if (counters === null) return objectResponse(call, decl, { id: rec.id, version: rec.version }, status)
  return requireSession(call).tenant.read((state) => objectResponse(call, decl, renderRecord(decl, rec, state, renderOptionsWith(call, decl, state, counters)), status))
}

/*
 * The reads below run in slices (TenantAccess.readInSlices). Their steps are
 * module-level generator functions called from an arrow: creating a
 * generator closure per request cost 4–7 µs here (Node 20), a fifth of a
 * `users/@self`.
 */

function* listSteps(call: Call, decl: ResourceDecl, plan: ListPlan, principal: Principal, scope: ListScope, state: TenantState): Steps<ApiResponse> {
  return listResponse(call, decl, state, yield* plan.runSteps(state, principal, scope))
}

function list(call: Call, decl: ResourceDecl, scope: ListScope): MaybePromise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const plan = planList(decl, call.request.query)
  return tenant.readInSlices((state) => listSteps(call, decl, plan, principal, scope, state))
}

function* countSteps(call: Call, plan: ListPlan, principal: Principal, scope: ListScope, state: TenantState): Steps<ApiResponse> {
  return textResponse(call.request, String(yield* plan.countSteps(state, principal, scope)))
}

function count(call: Call, decl: ResourceDecl, scope: ListScope): MaybePromise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const plan = planList(decl, call.request.query)
  return tenant.readInSlices((state) => countSteps(call, plan, principal, scope, state))
}

function* summaryAnswerSteps(call: Call, plan: ListPlan, summaryPlan: SummaryPlan, principal: Principal, scope: ListScope, state: TenantState): Steps<ApiResponse> {
  const entries = yield* summarySteps(summaryPlan, (visit) => plan.eachMatching(state, principal, scope, visit), state)
  return dataResponse(call.request, entries, { root: 'summaries', item: 'summary' })
}

/** `summary?summary=[<groupedBy>;]<fn>[;…]` over the records a list with the same $filter would give. */
function summary(call: Call, decl: ResourceDecl, scope: ListScope): MaybePromise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const plan = planList(decl, call.request.query)
  const summaryPlan = parseSummary(decl, call.request.query.get('summary'))
  return tenant.readInSlices((state) => summaryAnswerSteps(call, plan, summaryPlan, principal, scope, state))
}

async function create(call: Call, decl: ResourceDecl, fixed: Record<string, unknown> = {}): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  if (!decl.creatable) throw new ApiError('TL01-1103', `${decl.type} objects cannot be created here`)
  const { values } = await readBodyValues(call, decl, true)
  const derive = writeOptionsOf(call.request, decl)
  const counters = writtenCounters(call, decl)
  const rec = await tenant.write((tx) => createObject(tx, principal, decl, Object.assign({}, values, fixed), derive))
  return writeAnswer(call, decl, rec, 201, counters)
}

function read(call: Call, decl: ResourceDecl, id: string, inTrash: boolean): MaybePromise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  return tenant.read((state) => {
    const rec = findVisible(state, principal, decl, id, inTrash)
    return objectResponse(call, decl, renderShown(decl, rec, state, shownOptions(call, decl, state)))
  })
}

async function update(call: Call, decl: ResourceDecl, id: string): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const { values, version } = await readBodyValues(call, decl, false)
  // version_ignore=true overwrites the object at whatever version it is, even when the body names one (design §4).
  const versionIgnored = queryFlag(call.request, 'version_ignore')
  const derive = writeOptionsOf(call.request, decl)
  const counters = writtenCounters(call, decl)
  const rec = await tenant.write((tx) => updateObject(tx, principal, decl, id, values, versionIgnored ? null : version, !versionIgnored, derive))
  return writeAnswer(call, decl, rec, 200, counters)
}

/** `$set?field=value&…`: a PUT from query parameters; the version is checked only when the query names it (and not version_ignore). */
async function setFields(call: Call, decl: ResourceDecl, id: string): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const reserved = new Set(['token', 'format', 'callback', 'suppress_response_code', 'response_object', 'no_expand', 'version', 'version_ignore', 'method', 'apikey'])
  const values = fieldsFromText(decl, [...call.request.query].filter(([name]) => !reserved.has(name)))
  const versionText = call.request.query.get('version')
  const version = versionText === undefined || queryFlag(call.request, 'version_ignore') ? null : readVersion({ version: versionText }, 'text')
  const counters = appendedCounters(call, decl)
  const after = await tenant.write((tx) => setObjectFields(tx, principal, decl, id, values, version))
  return tenant.read((state) => objectResponse(call, decl, renderRecord(decl, after, state, renderOptionsWith(call, decl, state, counters))))
}

async function remove(call: Call, decl: ResourceDecl, id: string): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const hard = queryFlag(call.request, 'hard')
  checkRemovable(decl)
  const { trashItemId } = await tenant.write((tx) => deleteObject(tx, principal, decl, id, hard))
  return objectResponse(call, decl, trashItemId === null ? { id, deleted: true } : { id, trashItem: { id: trashItemId } })
}

/** Handles a request whose path starts with a resource path; `rest` is what follows it. A read answers at once when it can (maybePromise.ts). */
export function handleResource(call: Call, decl: ResourceDecl, rest: readonly string[]): MaybePromise<ApiResponse> {
  const method = call.request.method
  const [first, second, ...more] = rest
  if (first === undefined) {
    if (method === 'GET') return list(call, decl, { kind: 'all' })
    if (method === 'POST') {
      const action = findAction(decl.type, 'POST')
      return action === undefined ? create(call, decl) : action.handle(call, decl, null)
    }
    throw new MethodNotAllowed(method, METHODS_ON_COLLECTION)
  }
  if (second === undefined && first.startsWith('$')) {
    requireSession(call)
    const action = findAction(decl.type, first)
    if (action !== undefined) return action.handle(call, decl, null)
    if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
    if (first === '$count') return count(call, decl, { kind: 'all' })
    if (first === '$metadata') return dataResponse(call.request, metadataOf(decl), { root: 'metadata' })
    if (first === '$dummy') return objectResponse(call, decl, dummyOf(decl))
    throw new ApiError('TL01-9003', `unknown operation '${first}' on ${decl.path ?? decl.type}`)
  }
  if (second === undefined && first.startsWith('@')) {
    if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
    if (first === '@deleted') return list(call, decl, { kind: 'trashed' })
    const view = findView(decl.type, first)
    if (view === undefined) throw new ApiError('TL01-9003', `unknown view '${first}' of ${decl.path ?? decl.type}`)
    return list(call, decl, viewScope(view, requireSession(call).principal))
  }
  if (first === 'summary' && second === undefined) {
    if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
    return summary(call, decl, { kind: 'all' })
  }
  const id = first
  if (second === undefined) {
    if (method === 'GET') return read(call, decl, id, false)
    if (method === 'PUT') return update(call, decl, id)
    if (method === 'DELETE') {
      const action = findAction(decl.type, 'DELETE')
      return action === undefined ? remove(call, decl, id) : action.handle(call, decl, id)
    }
    throw new MethodNotAllowed(method, METHODS_ON_ITEM)
  }
  if (more.length > 0 && !(more.length === 1 && more[0] === '$count' && decl.inner.some((inner) => inner.name === second))) {
    throw new ApiError('TL01-9003', `no resource at this path`)
  }
  if (second === '@deleted') {
    if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
    return read(call, decl, id, true)
  }
  if (second === '$set') {
    if (method !== 'POST' && method !== 'PUT') throw new MethodNotAllowed(method, ['POST'])
    return setFields(call, decl, id)
  }
  if (second.startsWith('$')) {
    const action = findAction(decl.type, second)
    if (action === undefined) throw new ApiError('TL01-9003', `unknown operation '${second}' on ${decl.path ?? decl.type}`)
    return action.handle(call, decl, id)
  }
  const inner = decl.inner.find((candidate) => candidate.name === second)
  if (inner === undefined) throw new ApiError('TL01-9003', `${decl.path ?? decl.type} has no inner collection '${second}'`)
  return innerCollection(call, decl, id, inner, more[0] === '$count')
}

/** `<resource>/<id>/<inner>[/$count]`: the parent must be visible, then the children are listed, counted or added to. */
function innerCollection(call: Call, decl: ResourceDecl, id: string, inner: InnerCollection, counting: boolean): MaybePromise<ApiResponse> {
  const method = call.request.method
  const childDecl = resourceByType(inner.childType)
  const { tenant, principal } = requireSession(call)
  return andThen(tenant.read((state) => findVisible(state, principal, decl, id)), () => {
    const scope: ListScope = { kind: 'children', via: inner.via, parentId: id }
    if (counting) {
      if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
      return count(call, childDecl, scope)
    }
    if (method === 'GET') return list(call, childDecl, scope)
    if (method === 'POST') return create(call, childDecl, { [inner.via]: id })
    throw new MethodNotAllowed(method, METHODS_ON_COLLECTION)
  })
}

