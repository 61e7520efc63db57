/*
 * The JSON text of rendered records, kept across list answers while the
 * tenant's state stays the same.
 *
 * A page of time records embeds a few users, projects, tasks and clients
 * over and over: of the 276 KB of a page of 100 with references expanded,
 * 217 KB are embedded objects. And a client that reads a page reads it
 * again. So both are kept as JSON text: each referenced object as it is
 * embedded (expanded, or as a stub with no_expand), and each row of a list
 * as it is shown (with its references expanded or as stubs). A page read
 * again is then copied together from text, and a new page serializes only
 * its rows' own fields.
 *
 * A row is kept from its second rendering on. Keeping one costs more than
 * writing it once (its own buffer, then a copy into the answer), and
 * where writes come often, as in the mixed benchmark (100 tenants, one
 * request in ten a write), most rows are shown once before the next write
 * empties the cache. Kept at once, they cost that workload 10–30 % more
 * CPU per request in a same-minute A/B; kept from the second rendering,
 * no difference beyond the noise. The first rendering only marks the row
 * as seen.
 *
 * A rendering shows more than its record: its references, with display
 * names of other records. So an entry is valid only while the whole state
 * is unchanged: the cache remembers the state's change counter
 * (TenantState.changes, moved by every applied operation, rolled-back ones
 * included) and empties itself when it has moved. It is keyed by the
 * record object (a changed record is a new object anyway) and the form.
 * Rows with `append` counters are not kept: those depend on the viewer.
 *
 * The text is held as a JsonFragment (json/fragment.ts): bytes that
 * json/bytes.ts copies into the answer.
 *
 * Limits: at most CACHE_BYTES_MAX of text (about three pages of expanded
 * time records with their references) and ROWS_SEEN_MAX rows marked as
 * seen per tenant. Past them nothing more is kept or marked until the next
 * change empties the cache, and what is not kept is rendered as objects,
 * as without the cache: emptying and refilling it within one large answer,
 * or making text that is thrown away, would only churn memory.
 */
import { jsonValueBytes } from '../json/bytes.js'
import { JsonFragment } from '../json/fragment.js'
import type { Rec } from './schema.js'

/** The most text one tenant keeps. */
const CACHE_BYTES_MAX = 1024 * 1024
/** The most rows one tenant remembers as seen once. */
const ROWS_SEEN_MAX = 10_000

/** How a record is shown: embedded in another (expanded or stub), or as a row of a list (references expanded or stubs). */
export type RenderedForm = 'embedded' | 'stub' | 'row' | 'rowWithStubs'
type RowForm = Extract<RenderedForm, 'row' | 'rowWithStubs'>

/** Anything whose `changes` moves whenever what it holds changes (the tenant state). */
export interface ChangeCounted {
  readonly changes: number
}

export class RenderedJson {
  private changesSeen: number
  private readonly byForm = new Map<RenderedForm, Map<Rec, JsonFragment>>()
  /** Rows rendered once since the last change and not kept yet, by form. */
  private readonly rowsSeen = new Map<RowForm, Set<Rec>>([['row', new Set()], ['rowWithStubs', new Set()]])
  private rowsSeenCount = 0
  private bytes = 0

  constructor(private readonly state: ChangeCounted) {
    this.changesSeen = state.changes
  }

  /**
   * The JSON of `rec` in `form`, kept from now on; when the cache is full,
   * `render`'s output as it is. That output may hold fragments.
   */
  of<Out>(rec: Rec, form: RenderedForm, render: () => Out): Out | JsonFragment {
    this.clearWhenStale()
    return this.kept(rec, form, render)
  }

  /** A row of a list: as `of`, but on its first rendering since the last change only marked as seen. */
  row<Out>(rec: Rec, form: RowForm, render: () => Out): Out | JsonFragment {
    this.clearWhenStale()
    const seen = this.rowsSeen.get(form) as Set<Rec>
    if (seen.has(rec)) return this.kept(rec, form, render)
    if (this.rowsSeenCount < ROWS_SEEN_MAX) {
      seen.add(rec)
      this.rowsSeenCount += 1
    }
    return render()
  }

  /** `of` after the staleness check. */
  private kept<Out>(rec: Rec, form: RenderedForm, render: () => Out): Out | JsonFragment {
    let known = this.byForm.get(form)
    if (known === undefined) {
      known = new Map()
      this.byForm.set(form, known)
    }
    const kept = known.get(rec)
    if (kept !== undefined) return kept
    if (this.bytes >= CACHE_BYTES_MAX) return render()
    const fragment = new JsonFragment(jsonValueBytes(render()))
    known.set(rec, fragment)
    this.bytes += fragment.bytes.length
    return fragment
  }

  private clearWhenStale(): void {
    if (this.state.changes === this.changesSeen) return
    this.byForm.clear()
    for (const seen of this.rowsSeen.values()) seen.clear()
    this.rowsSeenCount = 0
    this.bytes = 0
    this.changesSeen = this.state.changes
  }
}

const byState = new WeakMap<ChangeCounted, RenderedJson>()

/** The JSON kept for one tenant state (a state loaded anew, as after a restore, starts empty). */
export function renderedJsonOf(state: ChangeCounted): RenderedJson {
  let cache = byState.get(state)
  if (cache === undefined) {
    cache = new RenderedJson(state)
    byState.set(state, cache)
  }
  return cache
}
