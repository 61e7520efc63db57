/*
 * Where a request's collection is: a resource path, or the inner collection
 * of one parent (`within`: its children, at `path` with the parent's id as
 * `{id}`, as `$metadata` names it). Every endpoint of the resource routes
 * (resources.ts) works on both; in an inner collection a list, count,
 * summary, view or trash list holds only the parent's children, an object
 * of another parent is not found, and a create or update keeps the
 * reference to the parent.
 */
import type { ResourceDecl } from '../../domain/schema.js'
import type { ListScope, ParentLink } from '../../query/plan.js'

export interface CollectionAt {
  decl: ResourceDecl
  within: ParentLink | null
  path: string
  /** Inner collections between the resource path and this one (0 at the resource path). */
  depth: number
}

const ALL: ListScope = { kind: 'all' }
const TRASHED: ListScope = { kind: 'trashed' }
const NOTHING_FIXED: Record<string, unknown> = {}

/** Every record of the collection (an inner one's: the parent's children). */
export function allOf(at: CollectionAt): ListScope {
  return at.within === null ? ALL : { kind: 'children', via: at.within.via, parentId: at.within.parentId }
}

/** The collection's trashed records. */
export function trashedOf(at: CollectionAt): ListScope {
  return at.within === null ? TRASHED : { kind: 'trashed', within: at.within }
}

/** The reference an inner collection fixes on what is created or changed in it. */
export function fixedOf(at: CollectionAt): Record<string, unknown> {
  if (at.within === null) return NOTHING_FIXED
  const { via, parentId } = at.within
  // A list of references (a time record's tags) holds the parent among its elements.
  return { [via]: at.decl.fieldsByName.get(via)?.list === true ? [parentId] : parentId }
}
