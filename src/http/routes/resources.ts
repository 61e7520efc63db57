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
 *                                   endpoint here again, on the parent's children (collectionAt.ts)
 *   GET    /{path}/@{view}/summary  a view summed up;  /{path}/@{view}/$count  counted
 *   *      /{path}/{id}/${action}   a resource action (actions.ts)
 *
 * Every list (views, trash and inner collections too) and every summary is
 * also a CSV or XLSX file on `format=csv|xlsx` or `Accept: text/csv` (export/).
 *
 * This module dispatches: the path is parsed into a typed target
 * (resourcePath.ts) and each target handled by its idea's module — reading
 * one object (resourceRead.ts), lists, counts and summaries
 * (resourceLists.ts), writes (resourceWrites.ts), actions (actions.ts),
 * views (views.ts) — answering as resourceAnswers.ts renders.
 */
import { ApiError, notFound } from '../../domain/errors.js'
import { metadataOf } from '../../domain/metadata.js'
import { dummyOf } from '../../domain/dummy.js'
import { resourceByType } from '../../domain/resources/index.js'
import type { ResourceDecl } from '../../domain/schema.js'
import { aliasedId } from '../../domain/selfAlias.js'
import { andThen, type MaybePromise } from '../../maybePromise.js'
import type { ListScope } from '../../query/plan.js'
import type { Call } from '../call.js'
import { requireSession } from '../requireSession.js'
import { dataResponse, type ApiResponse } from '../response.js'
import { findAction } from './actions.js'
import { allOf, fixedOf, trashedOf, type CollectionAt } from './collectionAt.js'
import { objectHistory } from './history.js'
import { MethodNotAllowed } from './methodNotAllowed.js'
import { objectResponse } from './resourceAnswers.js'
import { count, list, summary } from './resourceLists.js'
import { parseCollectionPath, type CollectionTarget, type ObjectTarget, type ViewTail } from './resourcePath.js'
import { findInside, readObject } from './resourceRead.js'
import { create, remove, setFields, update } from './resourceWrites.js'
import { findView, findViewSummary, viewScope } from './views.js'

const METHODS_ON_COLLECTION = ['GET', 'POST']
const METHODS_ON_ITEM = ['GET', 'PUT', 'PATCH', 'DELETE']

/** Inner collections a path may go through (`users/{id}/projects/{id}/tasks/{id}/timerecords` goes through 3). */
const MAX_INNER_DEPTH = 4

/** Handles a request whose path starts with a resource path `path`; `rest` is what follows it. A read answers at once when it can (maybePromise.ts). */
export function handleResource(call: Call, decl: ResourceDecl, rest: readonly string[], path: string): MaybePromise<ApiResponse> {
  let at = TOP_LEVEL.get(path)
  if (at === undefined || at.decl !== decl) {
    at = { decl, within: null, path, depth: 0 }
    TOP_LEVEL.set(path, at)
  }
  return handleCollection(call, at, parseCollectionPath(decl, rest, 0))
}

/** The collection at each declared resource path, made on its first request (a request allocates none). */
const TOP_LEVEL = new Map<string, CollectionAt>()

function metadataAnswer(call: Call, at: CollectionAt): ApiResponse {
  return dataResponse(call.request, metadataOf(at.decl, at.within === null ? at.decl.path : at.path), { root: 'metadata' })
}

/** `/{path}/@{view}[/summary|/$count]`: the view's records, listed, summed up or counted. */
function viewAnswer(call: Call, at: CollectionAt, name: string, tail: ViewTail): MaybePromise<ApiResponse> {
  const { decl } = at
  if (call.request.method !== 'GET') throw new MethodNotAllowed(call.request.method, ['GET'])
  let scope: ListScope
  if (name === '@deleted') scope = trashedOf(at)
  else {
    const view = findView(decl.type, name)
    if (view === undefined) throw new ApiError('TL01-9003', `unknown view '${name}' of ${decl.path ?? decl.type}`)
    scope = viewScope(view, requireSession(call).principal, at.within)
  }
  if (tail === 'list') return list(call, decl, scope)
  if (tail === 'summary') return summary(call, decl, scope)
  return count(call, decl, scope)
}

/** `/{path}/${name}`: an action, a selection or its summary, the count, the metadata or a sample object. */
function operationAnswer(call: Call, at: CollectionAt, name: string): MaybePromise<ApiResponse> {
  const { decl, within } = at
  const method = call.request.method
  requireSession(call)
  const action = findAction(decl.type, name)
  if (action !== undefined) return action.handle(call, decl, null, within)
  if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
  const selection = findView(decl.type, name)
  if (selection !== undefined) return list(call, decl, viewScope(selection, requireSession(call).principal, within))
  const summed = findViewSummary(decl.type, name)
  if (summed !== undefined) return summary(call, decl, viewScope(summed.view, requireSession(call).principal, within), summed.defaultSummary)
  if (name === '$count') return count(call, decl, allOf(at))
  if (name === '$metadata') return metadataAnswer(call, at)
  if (name === '$dummy') return objectResponse(call, decl, dummyOf(decl))
  throw new ApiError('TL01-9003', `unknown operation '${name}' on ${decl.path ?? decl.type}`)
}

function handleCollection(call: Call, at: CollectionAt, target: CollectionTarget): MaybePromise<ApiResponse> {
  const { decl, within } = at
  const method = call.request.method
  switch (target.kind) {
    case 'collection': {
      if (method === 'GET') return list(call, decl, allOf(at))
      if (method === 'POST') {
        const action = findAction(decl.type, 'POST')
        return action === undefined ? create(call, decl, fixedOf(at)) : action.handle(call, decl, null, within)
      }
      throw new MethodNotAllowed(method, METHODS_ON_COLLECTION)
    }
    case 'operation':
      return operationAnswer(call, at, target.name)
    case 'view':
      return viewAnswer(call, at, target.name, target.tail)
    case 'summary':
      if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
      return summary(call, decl, allOf(at))
    default:
      return target.alias ? aliasedObject(call, at, target) : objectAt(call, at, target, target.id)
  }
}

/** `/{path}/@self|@own[/…]`: the path of the object the alias stands for (domain/selfAlias.ts); 404 when the tenant has none. */
function aliasedObject(call: Call, at: CollectionAt, target: ObjectTarget): MaybePromise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  return andThen(
    tenant.inspect((state) => aliasedId(state, at.decl.type, principal.userId)),
    (id) => {
      if (id === null) throw notFound(at.decl.type, target.id)
      return objectAt(call, at, target, id)
    },
  )
}

/** `/{path}/{id}[/…]` once the id is known (an alias resolved): in an inner collection, checked to be the parent's child first. */
function objectAt(call: Call, at: CollectionAt, target: ObjectTarget, id: string): MaybePromise<ApiResponse> {
  // A GET of the object, and of its trashed form, check that themselves.
  const checkedByRead = target.kind === 'trashedObject' || (target.kind === 'object' && call.request.method === 'GET') || (target.kind === 'noSuchPath' && target.underTrash)
  if (at.within !== null && !checkedByRead)
    return andThen(
      requireSession(call).tenant.read((state) => findInside(state, call, at, id, false)),
      () => handleObject(call, at, target, id),
    )
  return handleObject(call, at, target, id)
}

/** `/{path}/{id}[/…]`: the object, an operation on it, or an inner collection of it. */
function handleObject(call: Call, at: CollectionAt, target: ObjectTarget, id: string): MaybePromise<ApiResponse> {
  const { decl, within } = at
  const method = call.request.method
  switch (target.kind) {
    case 'object': {
      if (method === 'GET') return readObject(call, at, id, false)
      if (method === 'PUT') return update(call, decl, id, fixedOf(at), 'update')
      if (method === 'PATCH') return update(call, decl, id, fixedOf(at), 'mergePatch')
      if (method === 'DELETE') {
        const action = findAction(decl.type, 'DELETE')
        return action === undefined ? remove(call, decl, id) : action.handle(call, decl, id, within)
      }
      throw new MethodNotAllowed(method, METHODS_ON_ITEM)
    }
    case 'trashedObject':
      if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
      return readObject(call, at, id, true)
    case 'history':
      if (method !== 'GET') throw new MethodNotAllowed(method, ['GET'])
      return objectHistory(call, decl, id)
    case 'set':
      if (method !== 'POST' && method !== 'PUT') throw new MethodNotAllowed(method, ['POST'])
      return setFields(call, decl, id, fixedOf(at))
    case 'action': {
      const action = findAction(decl.type, target.name)
      if (action === undefined) throw new ApiError('TL01-9003', `unknown operation '${target.name}' on ${decl.path ?? decl.type}`)
      return action.handle(call, decl, id, within)
    }
    case 'noSuchPath':
      throw new ApiError('TL01-9003', target.message)
    case 'inner':
      return innerCollection(call, at, id, target)
  }
}

/** `<collection>/<id>/<inner>[/…]`: the parent must be visible, then the rest is handled on its children. */
function innerCollection(call: Call, at: CollectionAt, id: string, target: Extract<ObjectTarget, { kind: 'inner' }>): MaybePromise<ApiResponse> {
  if (at.depth >= MAX_INNER_DEPTH) throw new ApiError('TL01-9003', `no resource at this path: at most ${MAX_INNER_DEPTH} inner collections deep`)
  const { inner } = target
  const childDecl = resourceByType(inner.childType)
  const child: CollectionAt = { decl: childDecl, within: { via: inner.via, parentId: id }, path: `${at.path}/{id}/${inner.name}`, depth: at.depth + 1 }
  return andThen(
    requireSession(call).tenant.read((state) => findInside(state, call, at, id, false)),
    () => handleCollection(call, child, parseCollectionPath(childDecl, target.segments, target.from)),
  )
}
