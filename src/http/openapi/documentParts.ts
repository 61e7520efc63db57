/*
 * Parts of the OpenAPI description, so that the reference page (/docs)
 * need not take in the whole of it before it shows anything: the whole
 * document is over a megabyte (some 800 operations), and Swagger UI spent
 * seconds on it before its first screen. `GET /v1/openapi.json?tags=…`
 * answers a part:
 *
 *   * `tags=` (empty): the outline — the document without its operations:
 *     info, servers, security, every tag with its description, and the
 *     security schemes (Authorize works from the start). The page shows
 *     this first.
 *   * `tags=Project,Task`: the operations of these tags, with the
 *     components they refer to (followed through `$ref`, schemas that refer
 *     to other schemas included), and the outline's fields. The page loads
 *     a tag's part when the tag is opened and merges it in.
 *
 * Each part is a valid OpenAPI document on its own. Without `tags` the
 * whole document is answered, as before. A tag the document does not have
 * is 400 TL01-1105 naming the tags. Parts are made from the whole document
 * once per running service and tag list, and kept (at most
 * KEPT_PARTS_MAX lists: a page asks for one tag at a time).
 */
import { wrongParameter } from '../../domain/errors.js'

type Document = Record<string, unknown>
type Components = Record<string, Record<string, unknown>>
type Paths = Record<string, Record<string, { tags?: string[] }>>

/** The most parts kept per service (the outline and one per tag cover the page's use; beyond, a part is made again). */
const KEPT_PARTS_MAX = 128

/** The tags of the document, in its order. */
function tagNames(whole: Document): string[] {
  return ((whole.tags as { name: string }[] | undefined) ?? []).map((tag) => tag.name)
}

/** The names of `tags=` (sorted, each once): none for the outline; 400 for one not in `known`. */
function requestedTags(known: ReadonlySet<string>, text: string): string[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  for (const name of names) if (!known.has(name)) throw wrongParameter(`tags: the description has no tag '${name.slice(0, 60)}' (it has ${[...known].join(', ')})`)
  return [...new Set(names)].sort()
}

/** Every `#/components/<kind>/<name>` that `value` refers to, added to `found` (as `<kind>/<name>`). */
function collectRefs(value: unknown, found: Set<string>, pending: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) collectRefs(item, found, pending)
    return
  }
  if (typeof value !== 'object' || value === null) return
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/')) {
      const target = inner.slice('#/components/'.length)
      if (!found.has(target)) {
        found.add(target)
        pending.push(target)
      }
    } else collectRefs(inner, found, pending)
  }
}

/** The components `paths` refer to, directly or through other components. */
function referencedComponents(components: Components, paths: Paths): Components {
  const found = new Set<string>()
  const pending: string[] = []
  collectRefs(paths, found, pending)
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [kind, name] = next.split('/') as [string, string]
    collectRefs(components[kind]?.[name], found, pending)
  }
  const part: Components = {}
  for (const target of [...found].sort()) {
    const [kind, name] = target.split('/') as [string, string]
    const component = components[kind]?.[name]
    if (component === undefined) continue
    part[kind] ??= {}
    part[kind][name] = component
  }
  return part
}

/** The part of `whole` with the operations of `tags` (none: the outline), as described at the top. */
function documentPart(whole: Document, tags: readonly string[]): Document {
  const wanted = new Set(tags)
  const paths: Paths = {}
  for (const [path, item] of Object.entries(whole.paths as Paths)) {
    const operations = Object.entries(item).filter(([, operation]) => (operation.tags ?? []).some((tag) => wanted.has(tag)))
    if (operations.length > 0) paths[path] = Object.fromEntries(operations)
  }
  const components = whole.components as Components
  const part: Components = { ...referencedComponents(components, paths), securitySchemes: components.securitySchemes ?? {} }
  return { ...whole, paths, components: part }
}

/** What is kept per running service: the document's tags, and the parts made so far by their tag list. */
interface KeptParts {
  readonly tags: ReadonlySet<string>
  readonly bodies: Map<string, Buffer>
}

const keptParts = new WeakMap<object, KeptParts>()

/**
 * The JSON text of the part `tagsText` asks for (`tags=`'s value) of the document whose text `wholeBody` gives, made
 * once per `owner` (the kept text of the whole document: docsOpenApi.ts) and tag list and kept; the whole document is parsed only
 * to make a part not made before.
 */
export function documentPartBody(owner: object, wholeBody: () => Buffer, tagsText: string): Buffer {
  const whole = () => JSON.parse(wholeBody().toString('utf8')) as Document
  let kept = keptParts.get(owner)
  if (kept === undefined) {
    kept = { tags: new Set(tagNames(whole())), bodies: new Map() }
    keptParts.set(owner, kept)
  }
  const tags = requestedTags(kept.tags, tagsText)
  const key = tags.join(',')
  let body = kept.bodies.get(key)
  if (body === undefined) {
    body = Buffer.from(JSON.stringify(documentPart(whole(), tags)))
    if (kept.bodies.size >= KEPT_PARTS_MAX) kept.bodies.clear()
    kept.bodies.set(key, body)
  }
  return body
}
