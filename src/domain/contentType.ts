/*
 * Content types that are stored and later sent back as a response header
 * (storage entries, uploaded files): taken as the client sent them, but only
 * printable ASCII and at most 255 characters, so a stored value can never
 * break or inject a header line.
 */
import { wrongParameter } from './errors.js'

export const MAX_CONTENT_TYPE_LENGTH = 255
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/

/** The Content-Type header to store, `fallback` when the request has none; 400 when unusable. */
export function storableContentType(header: string | undefined, fallback: string): string {
  const value = (header ?? '').trim()
  if (value === '') return fallback
  if (value.length > MAX_CONTENT_TYPE_LENGTH) throw wrongParameter(`Content-Type may have at most ${MAX_CONTENT_TYPE_LENGTH} characters`)
  if (!PRINTABLE_ASCII.test(value)) throw wrongParameter('Content-Type may hold only printable ASCII characters')
  return value
}
