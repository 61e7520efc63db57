/*
 * Live `append` counters: for every AppendCounter declared on any resource,
 * a map parent id → number of live children that count, kept by apply
 * through the StateObserver hook on every put and delete (a trashed child
 * stops counting, a restored one counts again), so a list with `append`
 * never scans children.
 *
 * A child that only one user may see (a counter's `visibleOnlyTo`, such as
 * a personal project under its client) is kept apart, per parent and per
 * that user; a viewer's count is the children everyone sees plus their
 * own private ones. A change of the child (moved to another parent, made
 * personal or not, given another owner) takes it out of the bucket it was
 * in and puts it into the one it is in now, like any other change.
 */
import { RESOURCES } from '../domain/resources/index.js'
import { assert } from '../assert.js'
import type { AppendCounter, Rec } from '../domain/schema.js'
import { untrashedRowsIn, untrashedRowsSteps, type StateObserver } from './stateObserver.js'
import type { Steps } from './steps.js'
import type { Collection } from './collection.js'
import { CodeColumn } from './columns.js'

interface Tally {
  readonly counter: AppendCounter
  /** parent id → children every viewer of the parent sees. */
  readonly shared: Map<string, number>
  /** parent id → user id → children only that user sees. */
  readonly privateTo: Map<string, Map<string, number>>
}

export class AppendCounters implements StateObserver {
  private readonly byChildType = new Map<string, Tally[]>()
  private readonly byName = new Map<string, Tally>()

  constructor() {
    for (const decl of RESOURCES) {
      for (const counter of decl.appends) {
        const tally: Tally = { counter, shared: new Map(), privateTo: new Map() }
        this.byName.set(`${decl.type}:${counter.name}`, tally)
        const list = this.byChildType.get(counter.childType) ?? []
        list.push(tally)
        this.byChildType.set(counter.childType, list)
      }
    }
  }

  onChange(type: string, before: Rec | undefined, after: Rec | undefined): void {
    const tallies = this.byChildType.get(type)
    if (tallies === undefined) return
    for (const tally of tallies) {
      if (before !== undefined) adjust(tally, before, -1)
      if (after !== undefined) adjust(tally, after, +1)
    }
  }

  follows(type: string): boolean {
    return this.byChildType.has(type)
  }

  /**
   * A collection loaded as columns: each counter without a condition on the child (`counts`, `visibleOnlyTo`) counts
   * its untrashed rows per parent from the `via` column's pool codes, as onChange would one record at a time; false
   * (to be shown the records) when a counter of the type has such a condition.
   */
  *takeLoadedSteps(type: string, collection: Collection): Steps<boolean> {
    const vias = this.plainVias(type, collection)
    if (vias === null) return false
    for (const [tally, via] of vias) {
      const perCode = new Map<number, number>()
      yield* untrashedRowsSteps(collection, (row) => {
        const code = via.code(row)
        if (code !== 0) perCode.set(code, (perCode.get(code) ?? 0) + 1)
      })
      for (const [code, count] of perCode) addTo(tally.shared, collection.pool.text(code), count)
    }
    return true
  }

  /**
   * Rows inserted by the log's replay: as takeLoadedSteps, each counter without a condition on the child counts them from
   * the `via` column's codes, one row at a time in order as onChange would; false when a counter of the type has one.
   */
  takeRows(type: string, collection: Collection, from: number, to: number): boolean {
    const vias = this.plainVias(type, collection)
    if (vias === null) return false
    for (const [tally, via] of vias) {
      untrashedRowsIn(collection, from, to, (row) => {
        const code = via.code(row)
        if (code !== 0) addTo(tally.shared, collection.pool.text(code), 1)
      })
    }
    return true
  }

  /** The counters of `type` and their `via` columns, when none of them has a condition on the child (`counts`, `visibleOnlyTo`) and each `via` is a column of codes; null otherwise. */
  private plainVias(type: string, collection: Collection): [Tally, CodeColumn][] | null {
    const vias: [Tally, CodeColumn][] = []
    for (const tally of this.byChildType.get(type) ?? []) {
      const via = collection.column(tally.counter.via)
      if (tally.counter.counts !== undefined || tally.counter.visibleOnlyTo !== undefined || !(via instanceof CodeColumn)) return null
      vias.push([tally, via])
    }
    return vias
  }

  reset(): void {
    for (const tally of this.byName.values()) {
      tally.shared.clear()
      tally.privateTo.clear()
    }
  }

  /** The counter of a parent as `viewerId` sees it: the shared children plus those only the viewer sees. */
  count(parentType: string, counterName: string, parentId: string, viewerId: string): number {
    const tally = this.byName.get(`${parentType}:${counterName}`)
    if (tally === undefined) return 0
    return (tally.shared.get(parentId) ?? 0) + (tally.privateTo.get(parentId)?.get(viewerId) ?? 0)
  }
}

function addTo(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta
  assert(next >= 0, `append counter for ${key} would go below zero`)
  if (next === 0) counts.delete(key)
  else counts.set(key, next)
}

function adjust(tally: Tally, child: Rec, delta: number): void {
  const { counter } = tally
  if (child.trashItem !== null) return
  const parentId = child[counter.via]
  if (typeof parentId !== 'string') return
  if (counter.counts !== undefined && !counter.counts(child)) return
  const onlyTo = counter.visibleOnlyTo?.(child) ?? null
  if (onlyTo === null) {
    addTo(tally.shared, parentId, delta)
    return
  }
  const perUser = tally.privateTo.get(parentId) ?? new Map<string, number>()
  addTo(perUser, onlyTo, delta)
  if (perUser.size === 0) tally.privateTo.delete(parentId)
  else tally.privateTo.set(parentId, perUser)
}
