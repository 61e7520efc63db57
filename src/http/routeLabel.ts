/*
 * The route a request took, as a bounded label for metrics and logs: the
 * route-table pattern for fixed routes, and for resource paths the path
 * with the id replaced by `:id` and only known words kept (operations such
 * as `$count` or `$set`, views, `@deleted`, `summary`, inner collections);
 * any other word becomes `:unknown`. Labels are interned, so the same route
 * always gives the same object and building one allocates only the first
 * time.
 */
import type { ResourceDecl } from '../domain/schema.js'
import type { RouteLabel } from '../observability/requestMetrics.js'
import { findAction } from './routes/actions.js'
import { findView } from './routes/views.js'

class LabelNode {
  private readonly children = new Map<string, LabelNode>()
  readonly label: RouteLabel

  constructor(route: string, scope: RouteLabel['scope']) {
    this.label = { route, scope }
  }

  child(word: string): LabelNode {
    let node = this.children.get(word)
    if (node === undefined) {
      node = new LabelNode(`${this.label.route}/${word}`, this.label.scope)
      this.children.set(word, node)
    }
    return node
  }
}

const fixedLabels = new Map<object, RouteLabel>()

/** The label of a fixed route of the route table (looked up by the route object: no string is built per request). */
export function fixedRouteLabel(route: { readonly scope: 'tenant' | 'public'; readonly pattern: string }): RouteLabel {
  let label = fixedLabels.get(route)
  if (label === undefined) {
    label = { route: `/v1/${route.pattern}`, scope: route.scope }
    fixedLabels.set(route, label)
  }
  return label
}

const COLLECTION_WORDS = new Set(['$count', '$metadata', '$dummy', '@deleted', 'summary'])
const ITEM_WORDS = new Set(['@deleted', '$set'])
const ID = ':id'
const UNKNOWN = ':unknown'
const resourceRoots = new Map<string, LabelNode>()

function knownFirst(decl: ResourceDecl, word: string): boolean {
  return COLLECTION_WORDS.has(word) || (word.startsWith('$') && findAction(decl.type, word) !== undefined) || (word.startsWith('@') && findView(decl.type, word) !== undefined)
}

function knownSecond(decl: ResourceDecl, word: string): boolean {
  return ITEM_WORDS.has(word) || (word.startsWith('$') && findAction(decl.type, word) !== undefined) || decl.inner.some((inner) => inner.name === word)
}

/** The label of a request on a declared resource path: `path` as matched, `rest` the segments after it. */
export function resourceRouteLabel(decl: ResourceDecl, path: string, rest: readonly string[]): RouteLabel {
  let node = resourceRoots.get(path)
  if (node === undefined) {
    node = new LabelNode(`/v1/${path}`, 'tenant')
    resourceRoots.set(path, node)
  }
  const [first, second, third] = rest
  if (first === undefined) return node.label
  const firstIsWord = rest.length === 1 && (first.startsWith('$') || first.startsWith('@') || first === 'summary')
  node = node.child(firstIsWord ? (knownFirst(decl, first) ? first : UNKNOWN) : ID)
  if (second === undefined) return node.label
  node = node.child(knownSecond(decl, second) ? second : UNKNOWN)
  if (third === undefined) return node.label
  node = node.child(third === '$count' && rest.length === 3 ? third : UNKNOWN)
  return rest.length > 3 ? node.child(UNKNOWN).label : node.label
}
