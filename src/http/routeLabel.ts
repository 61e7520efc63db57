/*
 * The route a request took, as a bounded label for metrics and logs: the
 * route-table pattern for fixed routes, and for resource paths the path
 * with the id replaced by `:id` and only known words kept (operations such
 * as `$count` or `$set`, views, `@deleted`, `summary`, inner collections,
 * and inside an inner collection the same again, a few levels deep); any
 * other word becomes `:unknown`. Labels are interned, so the same route
 * always gives the same object and building one allocates only the first
 * time.
 */
import { resourceByType } from '../domain/resources/index.js'
import type { ResourceDecl } from '../domain/schema.js'
import { isSelfAlias } from '../domain/selfAlias.js'
import type { RouteLabel } from '../observability/requestMetrics.js'
import { findAction } from './routes/actions.js'
import { findView, findViewSummary } from './routes/views.js'

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
const VIEW_TAILS = new Set(['summary', '$count'])
const ID = ':id'
const UNKNOWN = ':unknown'
const resourceRoots = new Map<string, LabelNode>()

function knownFirst(decl: ResourceDecl, word: string): boolean {
  if (COLLECTION_WORDS.has(word) || (word.startsWith('$') && findAction(decl.type, word) !== undefined)) return true
  return findView(decl.type, word) !== undefined || findViewSummary(decl.type, word) !== undefined || isSelfAlias(decl.type, word)
}

function knownSecond(decl: ResourceDecl, word: string): boolean {
  return ITEM_WORDS.has(word) || (word.startsWith('$') && findAction(decl.type, word) !== undefined) || decl.inner.some((inner) => inner.name === word)
}

/** Inner collections a label follows (deeper ones are `:unknown`), so the labels stay few. */
const MAX_INNER_DEPTH = 3

/** The label below `node` for the segments `rest` on the collection of `decl` (recursing into inner collections). */
function labelBelow(node: LabelNode, decl: ResourceDecl, rest: readonly string[], depth: number): RouteLabel {
  const [first, second, third] = rest
  if (first === undefined) return node.label
  if (first.startsWith('@') && (second === undefined || (VIEW_TAILS.has(second) && third === undefined))) {
    node = node.child(knownFirst(decl, first) ? first : UNKNOWN)
    return second === undefined ? node.label : node.child(second).label
  }
  const firstIsWord = rest.length === 1 && (first.startsWith('$') || first === 'summary')
  node = node.child(firstIsWord ? (knownFirst(decl, first) ? first : UNKNOWN) : ID)
  if (second === undefined) return node.label
  const inner = decl.inner.find((candidate) => candidate.name === second)
  if (inner !== undefined && third !== undefined && depth < MAX_INNER_DEPTH) return labelBelow(node.child(second), resourceByType(inner.childType), rest.slice(2), depth + 1)
  node = node.child(knownSecond(decl, second) ? second : UNKNOWN)
  return third === undefined ? node.label : node.child(UNKNOWN).label
}

/** The label of a request on a declared resource path: `path` as matched, `rest` the segments after it. */
export function resourceRouteLabel(decl: ResourceDecl, path: string, rest: readonly string[]): RouteLabel {
  let node = resourceRoots.get(path)
  if (node === undefined) {
    node = new LabelNode(`/v1/${path}`, 'tenant')
    resourceRoots.set(path, node)
  }
  return labelBelow(node, decl, rest, 0)
}
