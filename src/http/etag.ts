/*
 * Entity tags of answers, and `If-None-Match` answered 304 (RFC 9110 §8.8.3, §13.1.2).
 *
 * A single object's tag is strong: `"<version>-<digest>"`, the object's
 * version, then a digest of the bytes of the answer's body. The body is a
 * few hundred bytes, so hashing it costs a few microseconds, and the tag is
 * exact: it changes when the object changes, when anything it shows changes
 * without touching its version (an embedded project renamed, an `append`
 * counter), and with every representation option (format, no_expand,
 * append, a JSONP callback), and it stays while none of those change. The
 * version in front is what `If-Match` reads (etagPreconditions.ts). A row
 * kept as JSON text across answers (domain/renderedJson.ts) keeps its
 * digest beside it, so reading an unchanged object again hashes nothing.
 *
 * A list's tag is weak: `W/"<seq>-<digest>"`, the tenant's log sequence
 * number at read time, then a digest of what picks and shapes the list
 * (the path, the query but the token, the format and Accept, the caller).
 * Every change to a tenant's state is a log entry with a higher sequence
 * number (a restore takes a number above all earlier ones:
 * tenants/installState.ts), and a
 * list is a function of the state, its query and its caller (no list or
 * view reads the clock), so any change of a listed item, of the count or of
 * the order changes the tag. It may change when nothing listed did (a write
 * elsewhere in the tenant): a missed 304, never a wrong one. It is known
 * before the list is run, so a matching `If-None-Match` skips the query, the
 * rendering and the body entirely; hashing a list's body instead would cost
 * a pass over up to a megabyte per answer. The digest of a key asked for
 * lately is remembered (recentResults.ts). `$count` and summaries are
 * tagged the same way. Inside a batch the state moves without a new
 * sequence number, so lists there get no tag.
 */
import crypto from 'node:crypto'
import { JsonFragment } from '../json/fragment.js'
import { RecentResults } from './recentResults.js'
import type { ApiRequest } from './request.js'
import { formatOf, type ApiResponse } from './response.js'
import { StreamedBody } from './streamedBody.js'

/** Characters of a digest kept in a tag (base64url: 96 bits). */
const DIGEST_CHARS = 16

function digest(data: string | Buffer): string {
  return crypto.hash('sha1', data, 'base64url').slice(0, DIGEST_CHARS)
}

/** The strong tag of one object's answer: its version and a digest of the body. */
function objectEtag(version: number, body: string | Buffer): string {
  return `"${version}-${digest(body)}"`
}

/** The query parameters that do not change what a list shows (credentials). */
const NOT_SHAPING = new Set(['token', 'apikey'])

/** List keys whose digest is kept: a client asks for the same lists again and again (the key's digest is all it needs). */
const MAX_KEPT_LIST_DIGESTS = 1024
/** Longest list key whose digest is kept: a path and a query of a few filters. */
const MAX_KEPT_LIST_KEY_CHARS = 2048
const listKeyDigests = new RecentResults(digest, MAX_KEPT_LIST_DIGESTS, MAX_KEPT_LIST_KEY_CHARS)

/** The weak tag of a list answer at sequence number `seq`, for the caller `userId` (see the top). */
function listEtag(request: ApiRequest, seq: number, userId: string): string {
  // The Accept header as sent, not only the format read from it: an answer in another type it may choose is another list.
  let key = `${request.tenant ?? ''}\u0000${userId}\u0000${formatOf(request)}\u0000${request.headers.get('accept') ?? ''}\u0000${request.method}\u0000${request.segments.join('/')}`
  for (const [name, value] of request.query) if (!NOT_SHAPING.has(name)) key += `\u0000${name}=${value}`
  return `W/"${seq}-${listKeyDigests.get(key)}"`
}

/** The tag of a list-like read (a list, count or summary) and, when `If-None-Match` names it, its 304. */
export interface ListCondition {
  /** Null inside a batch (see the top). */
  readonly etag: string | null
  readonly notModified: ApiResponse | null
}

const NO_CONDITION: ListCondition = { etag: null, notModified: null }

/** The condition of a list-like read of the state at `seq` by `userId`: known before the read runs. */
export function listCondition(request: ApiRequest, seq: number, userId: string): ListCondition {
  if (request.inBatch) return NO_CONDITION
  const etag = listEtag(request, seq, userId)
  return { etag, notModified: conditionalGet(request) && noneMatchHits(request, etag) ? notModified(etag) : null }
}

/** The opaque part of a tag (weak comparison: `W/` dropped). */
function opaque(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag
}

/** Whether the request's `If-None-Match` names `etag` (weak comparison), or is `*`. */
function noneMatchHits(request: ApiRequest, etag: string): boolean {
  const header = request.headers.get('if-none-match')
  if (header === undefined) return false
  const wanted = opaque(etag)
  for (const part of header.split(',')) {
    const tag = part.trim()
    if (tag === '*' || opaque(tag) === wanted) return true
  }
  return false
}

/**
 * Whether conditional answers apply to this request: a GET or HEAD, and not with `suppress_response_code` (a client
 * that asks for every status as 200 cannot take a 304 with no body).
 */
function conditionalGet(request: ApiRequest): boolean {
  return (request.method === 'GET' || request.method === 'HEAD') && request.query.get('suppress_response_code') !== 'true'
}

/** The 304 answer: no body, the tag, and the headers an answer of 200 would have had that still apply. */
function notModified(etag: string, headers: Record<string, string> = {}): ApiResponse {
  return { status: 304, headers: { ...headers, ETag: etag }, body: '' }
}

/** Digests of rows kept as JSON text across answers (renderedJson.ts): a row read again is not hashed again. */
const fragmentDigests = new WeakMap<JsonFragment, string>()

/**
 * A single object's answer with its tag; 304 when `If-None-Match` names it. `shown` is what the answer was written
 * from: when it is a row's kept JSON text (the body is its bytes), its digest is kept with it.
 */
export function withObjectEtag(request: ApiRequest, version: number, response: ApiResponse, shown?: unknown): ApiResponse {
  // An object is never streamed; a streamed answer (an export) has no digest to tag it by.
  if ((response.status !== 200 && response.status !== 201) || response.body instanceof StreamedBody) return response
  let etag: string
  if (shown instanceof JsonFragment && shown.bytes === response.body) {
    let known = fragmentDigests.get(shown)
    if (known === undefined) {
      known = digest(shown.bytes)
      fragmentDigests.set(shown, known)
    }
    etag = `"${version}-${known}"`
  } else etag = objectEtag(version, response.body)
  if (response.status === 200 && conditionalGet(request) && noneMatchHits(request, etag)) return notModified(etag)
  response.headers.ETag = etag
  return response
}
