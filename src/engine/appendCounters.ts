/*
 * Live `append` counters: for every AppendCounter declared on any resource,
 * a map parent id → number of live children that count. Kept by apply
 * through the StateObserver hook on every put and delete (a trashed child
 * stops counting, a restored one counts again), so a list with `append`
 * never scans children.
 */
import { RESOURCES } from '../domain/resources/index.js'
import type { AppendCounter, Rec } from '../domain/schema.js'
import type { StateObserver } from './tenantState.js'

export class AppendCounters implements StateObserver {
  private readonly byChildType = new Map<string, { counter: AppendCounter; counts: Map<string, number> }[]>()
  private readonly byName = new Map<string, Map<string, number>>()

  constructor() {
    for (const decl of RESOURCES) {
      for (const counter of decl.appends) {
        const counts = new Map<string, number>()
        this.byName.set(`${decl.type}:${counter.name}`, counts)
        const list = this.byChildType.get(counter.childType) ?? []
        list.push({ counter, counts })
        this.byChildType.set(counter.childType, list)
      }
    }
  }

  onChange(type: string, before: Rec | undefined, after: Rec | undefined): void {
    const watchers = this.byChildType.get(type)
    if (watchers === undefined) return
    for (const { counter, counts } of watchers) {
      if (before !== undefined) adjust(counts, counter, before, -1)
      if (after !== undefined) adjust(counts, counter, after, +1)
    }
  }

  reset(): void {
    for (const counts of this.byName.values()) counts.clear()
  }

  count(parentType: string, counterName: string, parentId: string): number {
    return this.byName.get(`${parentType}:${counterName}`)?.get(parentId) ?? 0
  }
}

function adjust(counts: Map<string, number>, counter: AppendCounter, child: Rec, delta: number): void {
  if (child.trashItem !== null) return
  const parentId = child[counter.via]
  if (typeof parentId !== 'string') return
  if (counter.counts !== undefined && !counter.counts(child)) return
  const next = (counts.get(parentId) ?? 0) + delta
  if (next === 0) counts.delete(parentId)
  else counts.set(parentId, next)
}
