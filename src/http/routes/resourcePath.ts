/*
 * The path below a resource path, parsed into what it names: a typed
 * target the resource routes (resources.ts) dispatch on, rather than
 * segments looked at again in each handler. An inner collection's path
 * (`/{path}/{id}/{inner}/…`) is parsed again from where its own part starts
 * (`from`), on the child collection, so no segments are copied.
 *
 * A path that names nothing is a target too (`noSuchPath`, with the words of
 * the 404): the handler refuses it where it refused it before, after the
 * checks that come first (an inner collection's parent is found, or not).
 * Parsing allocates one target per collection level at most, and none for
 * the collection itself or its summary.
 */
import type { InnerCollection, ResourceDecl } from '../../domain/schema.js'
import { isSelfAlias } from '../../domain/selfAlias.js'

/** What follows a view's name: nothing (its list), its summary, or its count. */
export type ViewTail = 'list' | 'summary' | '$count'

/** What a path names at or below one object; `id` as the path gives it (`alias`: `@self`/`@own`, not resolved yet). */
export type ObjectTarget =
  /** `/{id}`: the object (GET, PUT, PATCH, DELETE). */
  | { readonly kind: 'object'; readonly id: string; readonly alias: boolean }
  /** `/{id}/@deleted`: the object in the trash. */
  | { readonly kind: 'trashedObject'; readonly id: string; readonly alias: boolean }
  /** `/{id}/$history`. */
  | { readonly kind: 'history'; readonly id: string; readonly alias: boolean }
  /** `/{id}/$set`: fields set from the query. */
  | { readonly kind: 'set'; readonly id: string; readonly alias: boolean }
  /** `/{id}/${name}`: a resource action (actions.ts), maybe unknown. */
  | { readonly kind: 'action'; readonly id: string; readonly alias: boolean; readonly name: string }
  /** `/{id}/{inner}[/…]`: an inner collection of the object; its own path is `segments` from `from` on. */
  | { readonly kind: 'inner'; readonly id: string; readonly alias: boolean; readonly inner: InnerCollection; readonly segments: readonly string[]; readonly from: number }
  /** Below the object, a path that names nothing (404 TL01-9003 with `message`); `underTrash`: it goes on below `@deleted`. */
  | { readonly kind: 'noSuchPath'; readonly id: string; readonly alias: boolean; readonly message: string; readonly underTrash: boolean }

/** What a path names at a collection. */
export type CollectionTarget =
  /** `/`: the list (GET) or a create (POST). */
  | { readonly kind: 'collection' }
  /** `/${name}`: an action, a selection (`$unbilled`), its summary, `$count`, `$metadata` or `$dummy`; maybe unknown. */
  | { readonly kind: 'operation'; readonly name: string }
  /** `/summary`. */
  | { readonly kind: 'summary' }
  /** `/@{view}[/summary|/$count]` (`@deleted`: the trash). */
  | { readonly kind: 'view'; readonly name: string; readonly tail: ViewTail }
  | ObjectTarget

const COLLECTION: CollectionTarget = { kind: 'collection' }
const SUMMARY: CollectionTarget = { kind: 'summary' }

/** The target of `segments` from `from` on, below a collection of `decl`. */
export function parseCollectionPath(decl: ResourceDecl, segments: readonly string[], from: number): CollectionTarget {
  const first = segments[from]
  if (first === undefined) return COLLECTION
  const second = segments[from + 1]
  if (second === undefined && first.startsWith('$')) return { kind: 'operation', name: first }
  if (first.startsWith('@')) {
    if (isSelfAlias(decl.type, first)) return parseObjectPath(decl, first, true, segments, from + 1)
    if (second === undefined) return { kind: 'view', name: first, tail: 'list' }
    if ((second === 'summary' || second === '$count') && segments.length === from + 2) return { kind: 'view', name: first, tail: second }
  }
  if (first === 'summary' && second === undefined) return SUMMARY
  return parseObjectPath(decl, first, false, segments, from + 1)
}

/** The target of `segments` from `from` on, below the object `id` of `decl`. */
function parseObjectPath(decl: ResourceDecl, id: string, alias: boolean, segments: readonly string[], from: number): ObjectTarget {
  const second = segments[from]
  if (second === undefined) return { kind: 'object', id, alias }
  const inner = decl.inner.find((candidate) => candidate.name === second)
  if (segments.length > from + 1 && inner === undefined) return { kind: 'noSuchPath', id, alias, message: 'no resource at this path', underTrash: second === '@deleted' }
  if (second === '@deleted') return { kind: 'trashedObject', id, alias }
  if (second === '$history') return { kind: 'history', id, alias }
  if (second === '$set') return { kind: 'set', id, alias }
  if (second.startsWith('$')) return { kind: 'action', id, alias, name: second }
  if (inner === undefined) return { kind: 'noSuchPath', id, alias, message: `${decl.path ?? decl.type} has no inner collection '${second}'`, underTrash: false }
  return { kind: 'inner', id, alias, inner, segments, from: from + 1 }
}
