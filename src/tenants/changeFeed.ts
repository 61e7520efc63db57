/*
 * The change feed of one tenant: hands each log entry's changes
 * (engine/changesOfEntry.ts) to the tenant's subscribers — the live change
 * feed's connections (http/changes/) and the webhooks' deliverers — once the
 * entry is durable, never before (ARCHITECTURE.md §2.3: nothing shows state a crash
 * could take back).
 *
 * Order. The durability barrier tells the feed of every entry that became
 * durable (`durable`); appends of one tenant are flushed in order, and the
 * feed keeps that order anyway: an entry told early waits in `early` until
 * those before it were handed out. `publishedSeq` is the last entry handed
 * out; with no subscriber an entry costs only that number.
 *
 * When. The answers come first: a group commit makes its entries durable in
 * one event-loop turn, and their writes' answers are written in that turn's
 * promise reactions; the feed hands the entries out only after them, in the
 * turn's check phase (`setImmediate`), all entries of the tenant that became
 * durable meanwhile together (`due`). So the fan-out to many subscribers
 * never delays an answer, and a subscriber's outlet gets the events of a
 * whole group in one round, which it writes to its socket at once
 * (http/changes/). A tenant without subscribers hands an entry out at once
 * (its number is all it costs). Still only durable entries are handed out, and
 * `publishedSeq` moves only when an entry is: an entry that is durable but
 * not yet handed out is neither read by a resume nor missed by it.
 *
 * Resume. A subscriber that gives `since` (an event id: entry `seq`, and
 * optionally the place `op` of its last change in that entry) first reads
 * the entries after it from the log (TenantLog.readEntries), a slice at a
 * time, waiting whenever it cannot take more (`ready`, `whenReady`), while
 * live entries keep being handed to the others. Every entry up to
 * `publishedSeq` is durable, so in the log; once its read reaches
 * `publishedSeq` the subscriber joins the live ones in the same turn: no
 * entry is missed between the two and none comes twice. A log that no
 * longer holds the entry after `since` (pruned past LOG_RETENTION_MS, or a
 * restore took the history back) ends the subscription: HistoryGone.
 *
 * Watchers. Besides subscribers, the feed tells entry watchers of every
 * durable entry, in order, as soon as it is due (the raw entry, before any
 * change is derived; before its events are handed out) and of a history
 * rewritten (`null`): the webhooks' deliverer watches for writes to
 * its own records this way. A watcher costs nothing per change and, unlike
 * a subscriber, does not keep the tenant awake.
 *
 * Ends. The feed ends every subscription when the tenant's history is
 * rewritten (an online restore: `reset`), when the tenant leaves this actor
 * (renamed, released to another node: `endAll('moved')`) and when the
 * server stops (`endAll('stopping')`). A subscriber whose delivery throws
 * is ended too, so one broken connection never reaches the writes.
 */
import { assert, assertionFailed } from '../assert.js'
import { EventTexts, type Change } from '../domain/changes.js'
import { changesOfEntry, entryChangesAccess } from '../engine/changesOfEntry.js'
import type { LogEntry } from '../engine/logEntry.js'
import type { TenantState } from '../engine/tenantState.js'
import type { TenantLog } from '../persist/ports.js'
import { scanChangesNewestFirst, type HistoryScan } from './changeHistory.js'

/** Why the feed ended a subscription. */
export type FeedEnd = 'stopping' | 'moved' | 'historyRewritten' | 'historyGone' | 'failed'

/** The log entries a resuming subscriber reads from the log at a time. */
const CATCH_UP_SLICE_ENTRIES = 256

/** An event id: after entry `seq` (op null), or after its change at place `op`. */
export interface EventPosition {
  readonly seq: number
  readonly op: number | null
}

export interface ChangeSubscriber {
  /**
   * The changes of one durable entry, in the entry's order (already cut to those after `since` for a resumed entry;
   * none when the entry changed only records that are never events, which may still end a session).
   * `texts` renders the events from `state`, the tenant's state now, shared with the other subscribers of this round;
   * `accessChanged` says the entry changed a token, a user or the account (entryChangesAccess).
   */
  deliver(changes: readonly Change[], texts: EventTexts, state: TenantState, accessChanged: boolean): void
  /** The feed ends the subscription; nothing is delivered after it. */
  ended(reason: FeedEnd): void
  /** Whether it can take the next entry of a resume now; else the resume waits for `whenReady`. */
  ready(): boolean
  /** Resolves once the subscriber can take more of a resume (or went away). */
  whenReady(): Promise<void>
  /** Set once the subscriber went away (it is then dropped). */
  readonly closed: boolean
}

/** `since` lies ahead of what the tenant logged. */
class SinceAhead extends Error {
  override name = 'SinceAhead'
  constructor(
    readonly since: number,
    readonly lastSeq: number,
  ) {
    super(`since ${since} is ahead of the tenant's log, which ends at ${lastSeq}`)
  }
}

/** Told of each durable entry, in order, and of a history rewritten (null): see the top. */
export type EntryWatcher = (seq: number, entry: LogEntry | null) => void

export class ChangeFeed {
  /** The last entry handed out (everything up to it is durable). */
  publishedSeq: number
  private readonly live = new Set<ChangeSubscriber>()
  private readonly resuming = new Set<ChangeSubscriber>()
  /** Entries told durable before an earlier one was: handed out in order later. */
  private readonly early = new Map<number, LogEntry>()
  /** Durable entries in order, to hand out once this turn's answers are written (see the top). */
  private due: { seq: number; entry: LogEntry }[] = []
  private handOutScheduled = false
  private readonly watchers = new Set<EntryWatcher>()

  constructor(
    private readonly tenant: string,
    private readonly log: TenantLog,
    seq: number,
    /** The tenant's state now (the events render from it). */
    private readonly stateNow: () => TenantState,
  ) {
    this.publishedSeq = seq
  }

  /** Subscriptions open, live or resuming (a tenant with any is not put to rest). */
  get subscriberCount(): number {
    return this.live.size + this.resuming.size
  }

  /** The barrier's word that the entry at `seq` is durable: handed out after this turn's answers (see the top). */
  durable(seq: number, entry: LogEntry): void {
    const last = this.due.length === 0 ? this.publishedSeq : (this.due[this.due.length - 1] as { seq: number }).seq
    if (seq !== last + 1) {
      if (seq > last) this.early.set(seq, entry)
      return
    }
    this.becameDue(seq, entry)
    for (let next = this.early.get(seq + 1); next !== undefined; next = this.early.get(seq + 1)) {
      this.early.delete(seq + 1)
      seq += 1
      this.becameDue(seq, next)
    }
  }

  /** The next entry in order is durable: the watchers hear of it now; the subscribers get it after the answers. */
  private becameDue(seq: number, entry: LogEntry): void {
    if (this.watchers.size > 0) this.tellWatchers(seq, entry)
    if (this.due.length === 0 && this.live.size === 0 && this.resuming.size === 0) {
      // Nobody to hand it to: it costs only the number, now.
      if (seq !== this.publishedSeq + 1) assertionFailed(`tenant '${this.tenant}': entry ${seq} handed out after ${this.publishedSeq}`)
      this.publishedSeq = seq
      return
    }
    this.due.push({ seq, entry })
    if (!this.handOutScheduled) {
      this.handOutScheduled = true
      setImmediate(() => this.handOut())
    }
  }

  /** Hands out the due entries, in order. */
  private handOut(): void {
    this.handOutScheduled = false
    const due = this.due
    this.due = []
    for (const { seq, entry } of due) {
      // A reset or rewind meanwhile took these entries back.
      if (seq !== this.publishedSeq + 1) continue
      try {
        this.publish(seq, entry)
      } catch (error) {
        // A bug deriving the entry's changes: nobody may miss them silently; the subscribers resume with since.
        console.error(`tenant '${this.tenant}': handing out entry ${seq} failed, ending its subscriptions:`, error)
        this.endAll('failed')
      }
    }
  }

  private publish(seq: number, entry: LogEntry): void {
    if (seq !== this.publishedSeq + 1) assertionFailed(`tenant '${this.tenant}': entry ${seq} handed out after ${this.publishedSeq}`)
    this.publishedSeq = seq
    if (this.live.size === 0) return
    // An entry without events may still end a session (a logout): it is delivered too.
    const changes = changesOfEntry(seq, entry)
    const accessChanged = entryChangesAccess(entry)
    if (changes.length === 0 && !accessChanged) return
    const state = this.stateNow()
    const texts = new EventTexts(state)
    for (const subscriber of this.live) this.deliverTo(subscriber, changes, texts, state, accessChanged)
  }

  private deliverTo(subscriber: ChangeSubscriber, changes: readonly Change[], texts: EventTexts, state: TenantState, accessChanged: boolean): void {
    if (subscriber.closed) {
      this.unsubscribe(subscriber)
      return
    }
    try {
      subscriber.deliver(changes, texts, state, accessChanged)
    } catch (error) {
      console.error(`tenant '${this.tenant}': a change subscriber failed, ending it:`, error)
      this.end(subscriber, 'failed')
    }
  }

  /**
   * Adds a subscriber: live at once without `since`; else after it read the log from `since` on. Resolves once it
   * is live (or ended); throws SinceAhead before anything is delivered.
   */
  async subscribe(subscriber: ChangeSubscriber, since: EventPosition | null): Promise<void> {
    if (since === null) {
      this.live.add(subscriber)
      return
    }
    if (since.seq > this.publishedSeq) throw new SinceAhead(since.seq, this.publishedSeq)
    this.resuming.add(subscriber)
    try {
      await this.resume(subscriber, since)
    } catch (error) {
      this.resuming.delete(subscriber)
      throw error
    }
  }

  private async resume(subscriber: ChangeSubscriber, since: EventPosition): Promise<void> {
    // `after`: the last entry delivered whole. A position inside an entry reads that entry again, from after `op`.
    let after = since.op === null ? since.seq : since.seq - 1
    for (;;) {
      if (!this.resuming.has(subscriber) || subscriber.closed) return
      if (after >= this.publishedSeq) {
        this.resuming.delete(subscriber)
        this.live.add(subscriber)
        return
      }
      const entries = await this.log.readEntries(this.tenant, after, CATCH_UP_SLICE_ENTRIES)
      if (!this.resuming.has(subscriber) || subscriber.closed) return
      if (entries[0]?.seq !== after + 1) {
        this.end(subscriber, 'historyGone')
        return
      }
      for (const { seq, entry } of entries) {
        // Entries past publishedSeq are durable but reach the live subscribers later: this one gets them then.
        if (seq > this.publishedSeq) break
        if (!subscriber.ready()) {
          await subscriber.whenReady()
          if (!this.resuming.has(subscriber) || subscriber.closed) return
        }
        assert(seq === after + 1, 'a resume read skipped an entry')
        let changes = changesOfEntry(seq, entry)
        if (seq === since.seq && since.op !== null) changes = changes.filter((change) => change.op > (since.op as number))
        after = seq
        const state = this.stateNow()
        this.deliverTo(subscriber, changes, new EventTexts(state), state, entryChangesAccess(entry))
        if (subscriber.closed) return
      }
    }
  }

  /**
   * The durable changes before entry `before` (null: from the newest handed out) newest first, read from the log
   * in slices (changeHistory.ts): the history of an object and of the tenant.
   */
  history(before: number | null, visitEntry: (changes: readonly Change[]) => boolean, maxEntries?: number): Promise<HistoryScan> {
    return scanChangesNewestFirst(this.log, this.tenant, this.publishedSeq, before, visitEntry, maxEntries)
  }

  /** Why a resume from `since` cannot start: ahead of the log, or the log no longer holds what follows it. */
  resumeProblem(since: EventPosition): 'ahead' | 'gone' | null {
    if (since.seq > this.publishedSeq) return 'ahead'
    const firstNeeded = since.op === null ? since.seq + 1 : since.seq
    if (firstNeeded > this.publishedSeq) return null
    return this.log.hasEntry(this.tenant, firstNeeded) ? null : 'gone'
  }

  /** Adds an entry watcher (see the top); the function returned removes it. */
  watch(watcher: EntryWatcher): () => void {
    this.watchers.add(watcher)
    return () => this.watchers.delete(watcher)
  }

  private tellWatchers(seq: number, entry: LogEntry | null): void {
    for (const watcher of this.watchers) {
      try {
        watcher(seq, entry)
      } catch (error) {
        console.error(`tenant '${this.tenant}': an entry watcher failed:`, error)
      }
    }
  }

  /** Drops a subscriber that went away. */
  unsubscribe(subscriber: ChangeSubscriber): void {
    this.live.delete(subscriber)
    this.resuming.delete(subscriber)
  }

  private end(subscriber: ChangeSubscriber, reason: FeedEnd): void {
    this.unsubscribe(subscriber)
    try {
      subscriber.ended(reason)
    } catch (error) {
      console.error(`tenant '${this.tenant}': ending a change subscriber failed:`, error)
    }
  }

  /** Ends every subscription (the tenant moved, or the server stops). */
  endAll(reason: FeedEnd): void {
    for (const subscriber of [...this.live, ...this.resuming]) this.end(subscriber, reason)
  }

  /** The tenant's history was rewritten up to `seq` (an online restore): every subscription ends. */
  reset(seq: number): void {
    this.endAll('historyRewritten')
    this.early.clear()
    this.due = []
    this.publishedSeq = seq
    if (this.watchers.size > 0) this.tellWatchers(seq, null)
  }

  /** The state went back to what the log holds up to `seq` (a failed append): what waited after it never comes. */
  rewind(seq: number): void {
    for (const waiting of this.early.keys()) if (waiting > seq) this.early.delete(waiting)
    this.due = this.due.filter((due) => due.seq <= seq)
    if (this.publishedSeq > seq) this.reset(seq)
  }
}
