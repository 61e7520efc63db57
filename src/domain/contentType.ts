/*
 * Content types that are stored and later sent back as a response header
 * (storage entries, uploaded files): taken as the client sent them, but only
 * printable ASCII and at most 255 characters, so a stored value can never
 * break or inject a header line.
 */
import { wrongParameter } from './errors.js'

const MAX_CONTENT_TYPE_LENGTH = 255
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/

/** The Content-Type header to store, `fallback` when the request has none; 400 when unusable. */
export function storableContentType(header: string | undefined, fallback: string): string {
  const value = (header ?? '').trim()
  if (value === '') return fallback
  if (value.length > MAX_CONTENT_TYPE_LENGTH) throw wrongParameter(`Content-Type may have at most ${MAX_CONTENT_TYPE_LENGTH} characters`)
  if (!PRINTABLE_ASCII.test(value)) throw wrongParameter('Content-Type may hold only printable ASCII characters')
  return value
}

/*
 * Stored content is written by clients and served back from the API's own
 * origin, so a browser that opens it must never run it. Only media types
 * that a browser shows without running anything (with nosniff, which every
 * answer carries) are served inline; every other type, known to be active
 * (HTML, SVG, XML, JavaScript, PDF, XSLT…) or unknown, is served as an
 * attachment. This is an allow list on purpose: a type nobody thought of is
 * an attachment, not a page.
 */
const PASSIVE_MEDIA_TYPES = new Set([
  'text/plain',
  'text/csv',
  'application/json',
  'application/octet-stream',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'image/x-icon',
  'image/vnd.microsoft.icon',
])

/** The media type of a Content-Type value: before any parameters, trimmed, lower case. */
function mediaTypeOf(contentType: string): string {
  return (contentType.split(';', 1)[0] as string).trim().toLowerCase()
}

/** Whether a stored content type may be shown inline by a browser (see above); false for every active or unknown type. */
export function isPassiveContentType(contentType: string): boolean {
  return PASSIVE_MEDIA_TYPES.has(mediaTypeOf(contentType))
}
