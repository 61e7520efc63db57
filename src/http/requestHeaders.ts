/*
 * A request's headers as both listeners keep them (the API on
 * uWebSockets.js, server.ts; the admin listener on Node's http,
 * admin/adminServer.ts): by lower-cased name, a repeated header keeping its
 * last value (both parsers give the headers in the order sent), while the
 * fields a request may send only once are counted for messageRules.ts:
 * Host (a request names its host once) and the two that frame its body,
 * Content-Length and Transfer-Encoding. uWS hands every field it read,
 * repeats included, but itself reads the FIRST Content-Length: counting is
 * how a second one, which the map alone would hide, is seen.
 */

/** How many times the request sent each field it may send only once. */
export class OnceFieldCounts {
  host = 0
  contentLength = 0
  transferEncoding = 0
}

/** Keeps one header of the request, counting it in `counts` when it is one of the fields sent once. */
export function keepHeader(headers: Map<string, string>, counts: OnceFieldCounts, name: string, value: string): void {
  const lower = name.toLowerCase()
  headers.set(lower, value)
  if (lower === 'host') counts.host += 1
  else if (lower === 'content-length') counts.contentLength += 1
  else if (lower === 'transfer-encoding') counts.transferEncoding += 1
}
