/*
 * Running a list: candidates (a whole collection, or what an index or a
 * parent gives) are filtered by the compiled predicate, sorted by the
 * $orderby keys and paged by $skip/$top (at most 1000 a page).
 *
 * Without a sort the pass stops as soon as the page is full. With a sort and
 * a page, only the best skip+top records are kept in a bounded sorted buffer
 * (binary insertion), so ten rows out of a million never sort a million.
 * A page far down (skip+top above SORTED_BUFFER_MAX) would make that buffer
 * quadratic: then every match is kept and sorted once (sortInSteps.ts).
 *
 * Both passes are steps (engine/steps.ts): they pause after every
 * SCAN_STEP_RECORDS candidates, so a long read runs in slices
 * (tenants/slicedRead.ts). `runList` runs them at once.
 * They run over records or over rows alike (`pageSteps`: the planner scans
 * rows and makes records of the page only: plan.ts).
 */
import { wrongParameter } from '../domain/errors.js'
import type { DisplayContext, Rec } from '../domain/schema.js'
import { runNow, type Steps } from '../engine/steps.js'
import { recordComparator, type OrderKey } from './orderBy.js'
import { sortInSteps } from './sortInSteps.js'

export const MAX_PAGE_SIZE = 1000
const MAX_SKIP = 10_000_000
/** Candidates a scan visits between two pauses (a few hundred µs of work at most). */
export const SCAN_STEP_RECORDS = 512
/** The largest skip+top kept in a sorted buffer by binary insertion; past it, the matches are sorted once. */
const SORTED_BUFFER_MAX = 4096

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

/** `maxPage`: the largest page (and the page without $top); an export's is larger than MAX_PAGE_SIZE. */
export function parsePaging(query: ReadonlyMap<string, string>, maxPage = MAX_PAGE_SIZE): Paging {
  return {
    top: parseCount('$top', query.get('$top'), maxPage, maxPage),
    skip: parseCount('$skip', query.get('$skip'), 0, MAX_SKIP),
  }
}

export function runList(candidates: Iterable<Rec>, predicate: Predicate, order: readonly OrderKey[], paging: Paging, context: DisplayContext): Rec[] {
  return runNow(runListSteps(candidates, predicate, order, paging, context))
}

function* runListSteps(candidates: Iterable<Rec>, predicate: Predicate, order: readonly OrderKey[], paging: Paging, context: DisplayContext): Steps<Rec[]> {
  return yield* pageSteps(candidates, predicate, order.length === 0 ? null : recordComparator(order, context), paging)
}

/** The page of the candidates that pass, in `compare`'s order (null: as they come), as steps: records or rows alike. */
export function* pageSteps<T>(candidates: Iterable<T>, predicate: (item: T) => boolean, compare: ((a: T, b: T) => number) | null, paging: Paging): Steps<T[]> {
  const wanted = paging.skip + paging.top
  if (paging.top === 0) return []
  let visited = 0
  if (compare === null) {
    const out: T[] = []
    let skipped = 0
    for (const item of candidates) {
      if (++visited === SCAN_STEP_RECORDS) {
        visited = 0
        yield
      }
      if (!predicate(item)) continue
      if (skipped < paging.skip) {
        skipped += 1
        continue
      }
      out.push(item)
      if (out.length >= paging.top) break
    }
    return out
  }
  if (wanted > SORTED_BUFFER_MAX) {
    const matches: T[] = []
    for (const item of candidates) {
      if (++visited === SCAN_STEP_RECORDS) {
        visited = 0
        yield
      }
      if (predicate(item)) matches.push(item)
    }
    if (matches.length <= paging.skip) return []
    return (yield* sortInSteps(matches, compare)).slice(paging.skip, wanted)
  }
  const best: T[] = []
  for (const item of candidates) {
    if (++visited === SCAN_STEP_RECORDS) {
      visited = 0
      yield
    }
    if (!predicate(item)) continue
    if (best.length === wanted && compare(item, best[wanted - 1] as T) >= 0) continue
    let low = 0
    let high = best.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compare(best[middle] as T, item) <= 0) low = middle + 1
      else high = middle
    }
    best.splice(low, 0, item)
    if (best.length > wanted) best.pop()
  }
  return best.slice(paging.skip)
}

export function* countMatchingSteps<T>(candidates: Iterable<T>, predicate: (item: T) => boolean): Steps<number> {
  let count = 0
  let visited = 0
  for (const item of candidates) {
    if (++visited === SCAN_STEP_RECORDS) {
      visited = 0
      yield
    }
    if (predicate(item)) count += 1
  }
  return count
}
