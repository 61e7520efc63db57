/*
 * Sorting as steps (engine/steps.ts), for reads that sort more records than
 * one slice can (a page far down a sorted list, the groups of a summary
 * grouped by a field of many values): a bottom-up merge sort that pauses
 * after about SORT_STEP_MOVES records moved. Stable, like Array.sort. A
 * short array is sorted in one go.
 */
import type { Steps } from '../engine/steps.js'

/** Records moved (or compared) between two pauses of a sort. */
export const SORT_STEP_MOVES = 16_384

/** `items` sorted by `compare` (a new array; `items` is left as it was). */
export function* sortInSteps<T>(items: readonly T[], compare: (a: T, b: T) => number): Steps<T[]> {
  if (items.length <= SORT_STEP_MOVES) return [...items].sort(compare)
  let from: T[] = []
  // Runs of SORT_STEP_MOVES sorted each in one go, then merged pairwise.
  for (let start = 0; start < items.length; start += SORT_STEP_MOVES) {
    const run = items.slice(start, start + SORT_STEP_MOVES).sort(compare)
    for (const item of run) from.push(item)
    yield
  }
  let to: T[] = new Array<T>(items.length)
  let moved = 0
  for (let width = SORT_STEP_MOVES; width < items.length; width *= 2) {
    for (let low = 0; low < items.length; low += 2 * width) {
      const middle = Math.min(low + width, items.length)
      const high = Math.min(low + 2 * width, items.length)
      let left = low
      let right = middle
      let out = low
      while (left < middle && right < high) {
        to[out++] = compare(from[right] as T, from[left] as T) < 0 ? (from[right++] as T) : (from[left++] as T)
        if (++moved === SORT_STEP_MOVES) {
          moved = 0
          yield
        }
      }
      while (left < middle) to[out++] = from[left++] as T
      while (right < high) to[out++] = from[right++] as T
    }
    ;[from, to] = [to, from]
  }
  return from
}
