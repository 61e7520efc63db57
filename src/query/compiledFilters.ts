/*
 * Compiled `$filter` texts, kept for reuse. Clients send the same filter
 * over and over (paging through a list, a dashboard that polls), and
 * parsing a text with the Ohm grammar costs more than running the filter
 * over an indexed page. A compiled filter depends only on the resource
 * declaration and the text — records and tenant state are handed to it
 * when it runs — so an entry can never be stale and is shared by every
 * tenant. Entries are keyed by resource type and text; past MAX_ENTRIES
 * the least recently used goes (a Map keeps insertion order: a hit is
 * moved to the end). A text that does not compile is not kept: its error
 * is thrown again on the next try. At most MAX_ENTRIES × the filter length
 * limit (4096 characters) of text is held.
 */
import type { ResourceDecl } from '../domain/schema.js'
import { compileFilter, type CompiledFilter } from './filterCompiler.js'

const MAX_ENTRIES = 512

const entries = new Map<string, CompiledFilter>()

export function compiledFilter(decl: ResourceDecl, text: string): CompiledFilter {
  const key = `${decl.type}\u0000${text}`
  const known = entries.get(key)
  if (known !== undefined) {
    entries.delete(key)
    entries.set(key, known)
    return known
  }
  const compiled = compileFilter(decl, text)
  entries.set(key, compiled)
  if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value as string)
  return compiled
}
