/*
 * The headers of an answer whose body is content a client stored (a storage
 * entry, an uploaded file), served from the API's own origin. Such a body
 * must never run as a page there: a stored `text/html` with a script, or an
 * SVG or XML document with one, would otherwise run with the origin of the
 * API when a browser opens its URL.
 *
 * Two locks, either of which is enough on its own:
 *   * Content-Disposition: attachment for every type that is not known to
 *     be passive (domain/contentType.ts): a browser that navigates to it
 *     saves it instead of showing it (uploaded files are always attachments,
 *     with their file name);
 *   * Content-Security-Policy: sandbox on every stored body: should a
 *     browser show it anyway (an <iframe>, an <object>, a viewer that
 *     ignores the disposition), it is shown in an opaque origin with scripts,
 *     forms and plugins off.
 * Neither header changes what fetch/XHR clients or an <img> receive. Every
 * answer also carries X-Content-Type-Options: nosniff (answerWriter.ts), so a
 * passive type is never sniffed into an active one.
 */
import { isPassiveContentType } from '../domain/contentType.js'

const STORED_CONTENT_POLICY = 'sandbox'

/** Headers for a stored body of `contentType`; `disposition` is used when given, else `attachment` for an active type. */
export function storedContentHeaders(contentType: string, disposition?: string): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': contentType, 'Content-Security-Policy': STORED_CONTENT_POLICY }
  const chosen = disposition ?? (isPassiveContentType(contentType) ? undefined : 'attachment')
  if (chosen !== undefined) headers['Content-Disposition'] = chosen
  return headers
}
