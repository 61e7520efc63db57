/*
 * The JSON text of rendered records, kept across answers (lists, and an
 * object read alone: render.ts, renderShown) while the tenant's state
 * stays the same.
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
 * seen per tenant. A full cache lets go of records as a clock does: it
 * walks them in the order they were kept (a Map's order); a record used
 * since the walk last passed it gets a second chance (its mark cleared,
 * it goes to the end), one not used is let go of. So a use only sets a
 * mark. Keeping the exact order of use instead took a Map delete and set
 * per row read: in-process, a list of 100 kept rows took 35–37 µs in the
 * first rounds of 200,000 answers and 67–107 µs later (27 % of it in that
 * bookkeeping), against 30–49 µs, mostly 30–35, with the clock. Over
 * HTTP, where sending the 283 KB dominates, runs of 25 s showed no
 * difference. The walk never lets go of a record used in the answer
 * being written (`startAnswer` opens an answer): emptying and refilling
 * the cache within one large answer would only churn memory, so past the
 * limit that answer's other records are rendered as objects, as without
 * the cache.
 * Before, a full cache kept nothing more until the next change: on a
 * server that answered a few other pages first, the list scenario's rows
 * were never kept again, and it did 1,319 req/s instead of about 4,000.
 * Rows seen once are forgotten all together when ROWS_SEEN_MAX is reached.
 */
import { jsonValueBytes } from '../json/bytes.js'
import { JsonFragment } from '../json/fragment.js'
import { assertionFailed } from '../assert.js'
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

/** The texts of one record, in the forms it was shown in, and when it was last used. */
interface KeptRecord {
  readonly forms: Map<RenderedForm, JsonFragment>
  bytes: number
  /** The answer that last used it (RenderedJson.answer). */
  lastAnswer: number
  /** Used since the clock last passed it (see the top). */
  used: boolean
}

export class RenderedJson {
  private changesSeen: number
  /** Kept texts by record, in the clock's order (see the top). */
  private readonly kept = new Map<Rec, KeptRecord>()
  /** Rows rendered once since the last change and not kept yet, by form. */
  private readonly rowsSeen = new Map<RowForm, Set<Rec>>([
    ['row', new Set()],
    ['rowWithStubs', new Set()],
  ])
  private rowsSeenCount = 0
  private bytes = 0
  /** The answer being written: a number that `startAnswer` moves. */
  private answer = 0
  /** The text of the records this answer used: what the cache cannot let go of now. */
  private answerBytes = 0

  constructor(private readonly state: ChangeCounted) {
    this.changesSeen = state.changes
  }

  /** Opens an answer: what it uses is not let go of until the next one. */
  startAnswer(): void {
    this.answer += 1
    this.answerBytes = 0
  }

  /** The text kept in all, in bytes (tests). */
  get keptBytes(): number {
    return this.bytes
  }

  /**
   * The JSON of `rec` in `form`, kept from now on; when the cache is full of
   * what this answer uses, `render`'s output as it is. That output may
   * hold fragments.
   */
  of<Out>(rec: Rec, form: RenderedForm, render: () => Out): Out | JsonFragment {
    this.clearWhenStale()
    return this.keep(rec, form, render)
  }

  /** A row of a list: as `of`, but on its first rendering since the last change only marked as seen. */
  row<Out>(rec: Rec, form: RowForm, render: () => Out): Out | JsonFragment {
    this.clearWhenStale()
    const seen = this.rowsSeen.get(form) as Set<Rec>
    if (seen.has(rec)) return this.keep(rec, form, render)
    if (this.rowsSeenCount >= ROWS_SEEN_MAX) this.forgetRowsSeen()
    seen.add(rec)
    this.rowsSeenCount += 1
    return render()
  }

  /** `of` after the staleness check. */
  private keep<Out>(rec: Rec, form: RenderedForm, render: () => Out): Out | JsonFragment {
    let entry = this.kept.get(rec)
    if (entry !== undefined) {
      this.use(entry)
      const known = entry.forms.get(form)
      if (known !== undefined) return known
    }
    // Nothing can be let go of: every kept text is this answer's.
    if (this.answerBytes >= CACHE_BYTES_MAX) return render()
    const out = render()
    const fragment = new JsonFragment(jsonValueBytes(out))
    const bytes = fragment.bytes.length
    if (!this.makeRoom(bytes)) return out
    if (entry === undefined) {
      // Not marked as used: a record read again after it was kept is the one worth a second chance.
      entry = { forms: new Map(), bytes: 0, lastAnswer: this.answer, used: false }
      this.kept.set(rec, entry)
    }
    entry.forms.set(form, fragment)
    entry.bytes += bytes
    this.bytes += bytes
    this.answerBytes += bytes
    return fragment
  }

  /** Marks a kept record as used by the answer being written. */
  private use(entry: KeptRecord): void {
    entry.used = true
    if (entry.lastAnswer === this.answer) return
    entry.lastAnswer = this.answer
    this.answerBytes += entry.bytes
  }

  /**
   * Lets go of records of earlier answers, as the clock passes them (see
   * the top), until `bytes` more fit; false when they cannot: this
   * answer's own text leaves too little room.
   */
  private makeRoom(bytes: number): boolean {
    if (this.answerBytes + bytes > CACHE_BYTES_MAX) return false
    // A Map's iteration also visits what is set again during it: a record given a second chance comes round once more.
    for (const [rec, entry] of this.kept) {
      if (this.bytes + bytes <= CACHE_BYTES_MAX) return true
      if (entry.lastAnswer === this.answer) continue
      this.kept.delete(rec)
      if (entry.used) {
        entry.used = false
        this.kept.set(rec, entry)
      } else this.bytes -= entry.bytes
    }
    if (this.bytes + bytes > CACHE_BYTES_MAX) assertionFailed(`RenderedJson: ${this.bytes} bytes kept after the clock went round, ${this.answerBytes} of them this answer's`)
    return true
  }

  private forgetRowsSeen(): void {
    for (const seen of this.rowsSeen.values()) seen.clear()
    this.rowsSeenCount = 0
  }

  private clearWhenStale(): void {
    if (this.state.changes === this.changesSeen) return
    this.kept.clear()
    this.forgetRowsSeen()
    this.bytes = 0
    this.answerBytes = 0
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
