/*
 * `Vary` names the request headers an answer depends on, so a cache keeps
 * one copy per value of each (RFC 9110 §12.5.5). Several parts of the front
 * end add to it (CORS adds Origin, compression Accept-Encoding, a route may
 * have its own): this adds one name to an answer's headers without
 * repeating it and without a second `Vary` line.
 */

/** `headers` with `name` added to its Vary (found under any capitalisation). */
export function withVary(headers: Readonly<Record<string, string>>, name: string): Record<string, string> {
  let key = 'Vary'
  // The name's length is compared before its letters: most answers have no Vary yet.
  for (const candidate in headers) {
    if (candidate.length === 4 && candidate.toLowerCase() === 'vary') {
      key = candidate
      break
    }
  }
  const current = headers[key]
  if (current === undefined) return { ...headers, [key]: name }
  const names = current
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
  if (names.includes('*') || names.some((item) => item.toLowerCase() === name.toLowerCase())) return { ...headers }
  return { ...headers, [key]: [...names, name].join(', ') }
}
