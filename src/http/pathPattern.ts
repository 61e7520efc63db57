/*
 * Matching a path against a pattern, segment by segment: a pattern such as
 * `storage/:group/:key` matches a path of as many segments, each literal
 * equal and each `:name` capturing one segment. The one way every listener
 * matches its routes: the API's route table (routeTable.ts), the admin
 * listener (admin/adminServer.ts) and the cluster's own calls on a node's
 * internal listener (cluster/clusterCalls.ts). A pattern is compiled once,
 * so a match compares strings and allocates only the captures it answers.
 */

/** A pattern split once: per segment, the literal it must equal or the name it captures. */
export interface PathPattern {
  readonly literals: readonly (string | null)[]
  readonly captures: readonly (string | null)[]
}

/** The pattern of these segments (`:name` captures one). */
export function compileSegments(parts: readonly string[]): PathPattern {
  return {
    literals: parts.map((part) => (part.startsWith(':') ? null : part)),
    captures: parts.map((part) => (part.startsWith(':') ? part.slice(1) : null)),
  }
}

/** The pattern of a path like `storage/:group/:key`, split at each `/`. */
export function compilePattern(pattern: string): PathPattern {
  return compileSegments(pattern.split('/'))
}

/** The captured segments of a path that matches a compiled pattern, or null (allocating nothing). */
export function matchCompiled({ literals, captures }: PathPattern, segments: readonly string[]): Record<string, string> | null {
  if (literals.length !== segments.length) return null
  for (let index = 0; index < literals.length; index += 1) {
    const literal = literals[index]
    if (literal !== null && literal !== segments[index]) return null
  }
  const params: Record<string, string> = {}
  for (let index = 0; index < captures.length; index += 1) {
    const name = captures[index]
    if (name !== null && name !== undefined) params[name] = segments[index] as string
  }
  return params
}

/** Matches a path against a pattern segment by segment; the captured segments, or null. */
export function matchPattern(pattern: string, segments: readonly string[]): Record<string, string> | null {
  return matchCompiled(compilePattern(pattern), segments)
}
