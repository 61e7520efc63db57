/*
 * Running a list: candidates (a whole collection, or what an index or a
 * parent gives) are filtered by the compiled predicate, sorted by the
 * $orderby keys and paged by $skip/$top (at most 1000 a page).
 *
 * Without a sort the pass stops as soon as the page is full. With a sort and
 * a page, only the best skip+top records are kept in a bounded sorted buffer
 * (binary insertion), so ten rows out of a million never sort a million.
 */
import { wrongParameter } from '../domain/errors.js'
import type { DisplayContext, Rec } from '../domain/schema.js'
import { recordComparator, type OrderKey } from './orderBy.js'

export const MAX_PAGE_SIZE = 1000
export const MAX_SKIP = 10_000_000

export type Predicate = (rec: Rec) => boolean

export interface Paging {
  top: number
  skip: number
}

function parseCount(name: string, text: string | undefined, fallback: number, limit: number): number {
  if (text === undefined || text === '') return fallback
  if (!/^\d{1,12}$/.test(text.trim())) throw wrongParameter(`${name} must be a non-negative integer, got '${text.slice(0, 32)}'`)
  return Math.min(Number(text), limit)
}

export function parsePaging(query: ReadonlyMap<string, string>): Paging {
  return {
    top: parseCount('$top', query.get('$top'), MAX_PAGE_SIZE, MAX_PAGE_SIZE),
    skip: parseCount('$skip', query.get('$skip'), 0, MAX_SKIP),
  }
}

export function runList(candidates: Iterable<Rec>, predicate: Predicate, order: readonly OrderKey[], paging: Paging, context: DisplayContext): Rec[] {
  const wanted = paging.skip + paging.top
  if (paging.top === 0) return []
  if (order.length === 0) {
    const out: Rec[] = []
    let skipped = 0
    for (const rec of candidates) {
      if (!predicate(rec)) continue
      if (skipped < paging.skip) {
        skipped += 1
        continue
      }
      out.push(rec)
      if (out.length >= paging.top) break
    }
    return out
  }
  const compare = recordComparator(order, context)
  const best: Rec[] = []
  for (const rec of candidates) {
    if (!predicate(rec)) continue
    if (best.length === wanted && compare(rec, best[wanted - 1] as Rec) >= 0) continue
    let low = 0
    let high = best.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compare(best[middle] as Rec, rec) <= 0) low = middle + 1
      else high = middle
    }
    best.splice(low, 0, rec)
    if (best.length > wanted) best.pop()
  }
  return best.slice(paging.skip)
}

export function countMatching(candidates: Iterable<Rec>, predicate: Predicate): number {
  let count = 0
  for (const rec of candidates) if (predicate(rec)) count += 1
  return count
}
