/*
 * Reading one object of a collection (`GET /{path}/{id}`, or its trashed
 * form at `/{path}/{id}/@deleted`): found as the caller may see it and, in
 * an inner collection, only as one of the parent's children; answered with
 * its ETag (etag.ts).
 */
import { notFound } from '../../domain/errors.js'
import { findVisible } from '../../domain/operations/findVisible.js'
import { renderShown } from '../../domain/render.js'
import type { Rec } from '../../domain/schema.js'
import type { TenantView } from '../../domain/tx.js'
import type { MaybePromise } from '../../maybePromise.js'
import { isChildOf } from '../../query/plan.js'
import type { Call } from '../call.js'
import { withObjectEtag } from '../etag.js'
import { requireSession } from '../requireSession.js'
import type { ApiResponse } from '../response.js'
import type { CollectionAt } from './collectionAt.js'
import { objectResponse, shownOptions } from './resourceAnswers.js'

/** The object (`inTrash`: its trashed form), rendered as a read shows it. */
export function readObject(call: Call, at: CollectionAt, id: string, inTrash: boolean): MaybePromise<ApiResponse> {
  const { decl } = at
  const { tenant } = requireSession(call)
  return tenant.read((state) => {
    const rec = findInside(state, call, at, id, inTrash)
    const shown = renderShown(decl, rec, state, shownOptions(call, decl, state))
    return withObjectEtag(call.request, rec.version, objectResponse(call, decl, shown), shown)
  })
}

/** A visible object of the collection (live, or with `inTrash` trashed): in an inner collection one of the parent's children; else 404. */
export function findInside(state: TenantView, call: Call, at: CollectionAt, id: string, inTrash: boolean): Rec {
  const rec = findVisible(state, requireSession(call).principal, at.decl, id, inTrash)
  if (at.within !== null && !isChildOf(rec[at.within.via], at.within.parentId)) throw notFound(at.decl.type, id)
  return rec
}
