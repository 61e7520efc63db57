/*
 * Live sums: for every LiveSum declared on any resource, a map parent id →
 * sum of the live children's values, kept in integer hundredths (money) so
 * that adding and taking away never drifts. Kept by apply through the
 * StateObserver hook on every put and delete (a trashed child stops
 * counting, a restored one counts again), so a derived total never scans
 * children per request.
 */
import { RESOURCES } from '../domain/resources/index.js'
import { roundMoney } from '../domain/pricing.js'
import type { LiveSum, Rec } from '../domain/schema.js'
import type { StateObserver } from './stateObserver.js'

interface Watcher {
  sum: LiveSum
  hundredths: Map<string, number>
}

export class LiveSums implements StateObserver {
  private readonly byChildType = new Map<string, Watcher[]>()
  private readonly byName = new Map<string, Map<string, number>>()

  constructor() {
    for (const decl of RESOURCES) {
      for (const sum of decl.sums) {
        const hundredths = new Map<string, number>()
        this.byName.set(`${decl.type}:${sum.name}`, hundredths)
        const watchers = this.byChildType.get(sum.childType) ?? []
        watchers.push({ sum, hundredths })
        this.byChildType.set(sum.childType, watchers)
      }
    }
  }

  onChange(type: string, before: Rec | undefined, after: Rec | undefined): void {
    const watchers = this.byChildType.get(type)
    if (watchers === undefined) return
    for (const watcher of watchers) {
      if (before !== undefined) adjust(watcher, before, -1)
      if (after !== undefined) adjust(watcher, after, +1)
    }
  }

  follows(type: string): boolean {
    return this.byChildType.has(type)
  }

  reset(): void {
    for (const hundredths of this.byName.values()) hundredths.clear()
  }

  /** The sum for a parent (0 when it has no live children). */
  sum(parentType: string, sumName: string, parentId: string): number {
    return (this.byName.get(`${parentType}:${sumName}`)?.get(parentId) ?? 0) / 100
  }
}

function toHundredths(value: number): number {
  return Math.round(roundMoney(value) * 100)
}

function adjust(watcher: Watcher, child: Rec, sign: number): void {
  if (child.trashItem !== null) return
  const parentId = child[watcher.sum.via]
  const value = watcher.sum.value(child)
  if (typeof parentId !== 'string' || value === null || !Number.isFinite(value)) return
  const next = (watcher.hundredths.get(parentId) ?? 0) + sign * toHundredths(value)
  if (next === 0) watcher.hundredths.delete(parentId)
  else watcher.hundredths.set(parentId, next)
}
