/*
 * The tenant's personal projects, kept live by apply (a StateObserver).
 *
 * A personal project and everything that belongs to it are hidden from
 * every user but its owner (policy.ts). Scans and reports must know which
 * projects those are without reading every project: a tenant usually has
 * few or none, so "is this record's project someone else's personal one?"
 * becomes a lookup in a small (usually empty) map.
 */
import type { Rec } from '../domain/schema.js'
import type { StateObserver } from './stateObserver.js'

export class PersonalProjects implements StateObserver {
  /** Personal project id → the project. */
  readonly byId = new Map<string, Rec>()

  onChange(type: string, before: Rec | undefined, after: Rec | undefined): void {
    if (type !== 'Project') return
    if (after?.personal === true) this.byId.set(after.id, after)
    else this.byId.delete((after ?? before)?.id ?? '')
  }

  follows(type: string): boolean {
    return type === 'Project'
  }

  reset(): void {
    this.byId.clear()
  }
}
