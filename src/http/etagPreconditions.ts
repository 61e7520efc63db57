/*
 * `If-Match` on a change of one object (PUT, PATCH, DELETE, `$set`): the version
 * the change was made for, given as the tag a read answered (etag.ts:
 * `"<version>-<digest>"`) instead of the body's `version`. Only the version
 * in front of a tag counts, so the tag of any answer about the object at
 * that version (a read in any format, the answer of the write that made
 * it) is as good as another; `W/` is accepted the same way. A bare
 * `"<version>"` is a version too. `*` asks only that the object exist.
 * Several tags match when any of them does. A header naming no version at
 * all can match nothing: it is refused like a stale one (412 TL01-1110),
 * and so is a version that is not the object's (the check itself is the
 * domain's: domain/operations/expectedVersion.ts, inside the write).
 */
import { wrongParameter } from '../domain/errors.js'
import type { ExpectedVersions } from '../domain/operations/expectedVersion.js'
import type { ApiRequest } from './request.js'

const VERSIONED_TAG = /^(?:W\/)?"(\d{1,15})(?:-[^"]*)?"$/

/** The longest `If-Match` header read (a handful of tags); past it 400. */
const MAX_IF_MATCH_LENGTH = 2048

/** The versions `If-Match` accepts, `'any'` for `*`, null when the request has no `If-Match`. */
export function ifMatchOf(request: ApiRequest): ExpectedVersions | null {
  const header = request.headers.get('if-match')
  if (header === undefined) return null
  if (header.length > MAX_IF_MATCH_LENGTH) throw wrongParameter(`If-Match is longer than ${MAX_IF_MATCH_LENGTH} characters`)
  const versions: number[] = []
  for (const part of header.split(',')) {
    const tag = part.trim()
    if (tag === '*') return 'any'
    const match = VERSIONED_TAG.exec(tag)
    if (match !== null) versions.push(Number(match[1]))
  }
  return versions
}
