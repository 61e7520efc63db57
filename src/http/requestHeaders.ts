/*
 * A request's headers as both listeners keep them (the API on
 * uWebSockets.js, server.ts; the admin listener on Node's http,
 * admin/adminServer.ts): by lower-cased name, a repeated header keeping its
 * last value (both parsers give the headers in the order sent), while the
 * Host headers are counted for messageRules.ts (a request names its host
 * once).
 */

/** Keeps one header of the request; true when it is a Host header. */
export function keepHeader(headers: Map<string, string>, name: string, value: string): boolean {
  const lower = name.toLowerCase()
  headers.set(lower, value)
  return lower === 'host'
}
