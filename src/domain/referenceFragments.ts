/*
 * The JSON text of referenced objects, kept across list answers while the
 * tenant's state stays the same.
 *
 * A page of time records embeds a few users, projects, tasks and clients
 * over and over: of the 276 KB of a page of 100 with references expanded,
 * 217 KB are embedded objects. Serializing them once per page
 * instead of once per row, and not again for the next page while nothing
 * changed, leaves only the rows' own fields to serialize.
 *
 * An embedded object shows more than its record: its own references as
 * stubs, with the display names of other records. So an entry is valid
 * only while the whole state is unchanged: the cache remembers the state's
 * change counter (TenantState.changes, moved by every applied operation,
 * rolled-back ones included) and empties itself when it has moved. It is
 * keyed by the record object (a changed record is a new object anyway).
 *
 * The text is held as a JsonFragment (jsonFragment.ts): bytes that the
 * answer writer (http/jsonArrayBytes.ts) copies into the answer.
 *
 * Limits: at most CACHE_BYTES_MAX of fragments per tenant; past that the
 * cache starts again empty.
 */
import { JsonFragment } from './jsonFragment.js'
import type { Rec } from './schema.js'

/** The most fragment bytes one tenant keeps (about 25 pages' worth of distinct embedded objects). */
const CACHE_BYTES_MAX = 1024 * 1024

/** Anything whose `changes` moves whenever what it holds changes (the tenant state). */
export interface ChangeCounted {
  readonly changes: number
}

export class ReferenceFragments {
  private changesSeen: number
  private readonly embedded = new Map<Rec, JsonFragment>()
  private readonly stubs = new Map<Rec, JsonFragment>()
  private bytes = 0

  constructor(private readonly state: ChangeCounted) {
    this.changesSeen = state.changes
  }

  /** The JSON of `rec` embedded (expanded) or as a stub; `render` gives its output object when it is not known. */
  of(rec: Rec, expanded: boolean, render: () => unknown): JsonFragment {
    if (this.state.changes !== this.changesSeen || this.bytes > CACHE_BYTES_MAX) this.clear()
    const known = expanded ? this.embedded : this.stubs
    let fragment = known.get(rec)
    if (fragment === undefined) {
      fragment = new JsonFragment(Buffer.from(JSON.stringify(render())))
      known.set(rec, fragment)
      this.bytes += fragment.bytes.length
    }
    return fragment
  }

  private clear(): void {
    this.embedded.clear()
    this.stubs.clear()
    this.bytes = 0
    this.changesSeen = this.state.changes
  }
}

const byState = new WeakMap<ChangeCounted, ReferenceFragments>()

/** The fragments kept for one tenant state (a state loaded anew, as after a restore, starts empty). */
export function referenceFragmentsOf(state: ChangeCounted): ReferenceFragments {
  let fragments = byState.get(state)
  if (fragments === undefined) {
    fragments = new ReferenceFragments(state)
    byState.set(state, fragments)
  }
  return fragments
}
