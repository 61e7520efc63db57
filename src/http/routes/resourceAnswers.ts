/*
 * What the resource routes answer with, shared by reads, lists and writes:
 * the render options of a request (the `append` counters it asks for, read
 * against the state, and the date form), an object or a list in the format
 * the request asks for, the answer to a create or update, and a list-like
 * answer's tag.
 */
import { wrongParameter } from '../../domain/errors.js'
import { renderedJsonOf } from '../../domain/renderedJson.js'
import { renderList, renderRecord, type OutObject, type RenderOptions } from '../../domain/render.js'
import type { Rec, ResourceDecl } from '../../domain/schema.js'
import type { TenantView } from '../../domain/tx.js'
import type { JsonFragment } from '../../json/fragment.js'
import type { MaybePromise } from '../../maybePromise.js'
import type { Call } from '../call.js'
import { withObjectEtag } from '../etag.js'
import { jsonDateFormOf } from '../jsonDates.js'
import { queryFlag } from '../request.js'
import { requireSession } from '../requireSession.js'
import { dataResponse, formatOf, type ApiResponse } from '../response.js'

/** The `append` counters the request asks for; 400 for one the resource does not offer. */
export function appendedCounters(call: Call, decl: ResourceDecl): ResourceDecl['appends'] {
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
export function renderOptionsWith(call: Call, decl: ResourceDecl, state: TenantView, declared: ResourceDecl['appends']): RenderOptions {
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
export function shownOptions(call: Call, decl: ResourceDecl, state: TenantView): RenderOptions {
  const options = renderOptions(call, decl, state)
  if (options.jsonDates === true && formatOf(call.request) === 'json') options.renderedJson = renderedJsonOf(state)
  return options
}

/** A list answer; in JSON its rows and referenced objects are JSON text kept across answers (renderedJson.ts). */
export function listResponse(call: Call, decl: ResourceDecl, state: TenantView, recs: readonly Rec[]): ApiResponse {
  const out = renderList(decl, recs, state, shownOptions(call, decl, state))
  return dataResponse(call.request, out, { root: decl.xmlListName, item: decl.xmlItemName })
}

export function objectResponse(call: Call, decl: ResourceDecl, out: OutObject | JsonFragment, status = 200): ApiResponse {
  return dataResponse(call.request, out, { root: decl.xmlItemName }, status)
}

/**
 * The answer to a create or update, rendered after the write: `{id, version}`, or with `response_object` the stored
 * object as a read after the write shows it. The counters `append` asks for are read before the write (400 refuses
 * the request, not half of it); null when the answer needs none.
 */
export function writtenCounters(call: Call, decl: ResourceDecl): ResourceDecl['appends'] | null {
  return queryFlag(call.request, 'response_object') ? appendedCounters(call, decl) : null
}

export function writeAnswer(call: Call, decl: ResourceDecl, rec: Rec, status: number, counters: ResourceDecl['appends'] | null): MaybePromise<ApiResponse> {
  if (counters === null) return withObjectEtag(call.request, rec.version, objectResponse(call, decl, { id: rec.id, version: rec.version }, status))
  return requireSession(call).tenant.read((state) =>
    withObjectEtag(call.request, rec.version, objectResponse(call, decl, renderRecord(decl, rec, state, renderOptionsWith(call, decl, state, counters)), status)),
  )
}

/** A list-like answer with its tag (etag.ts: listCondition), when it has one and succeeded. */
export function tagged(response: ApiResponse, etag: string | null): ApiResponse {
  if (etag !== null && response.status === 200) response.headers.ETag = etag
  return response
}
