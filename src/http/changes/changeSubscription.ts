/*
 * One connection's subscription to a tenant's change feed
 * (tenants/changeFeed.ts), whatever carries it: a WebSocket
 * (webSocketFeed.ts) or a Server-Sent Events answer (eventStream.ts), both
 * behind `FeedOutlet`.
 *
 * After each durable entry that changed a token, a user or the account
 * (`accessChanged`), the subscription first checks that its caller may
 * still read — the token still exists and has not expired, its user is
 * active and not in the trash (authenticate.ts's rules, read again against
 * the state the events render from) — and ends with 4401 otherwise: a
 * logout, a revoked token, a deactivated user end the stream at the entry
 * that made them so. The caller's rights (admin or not) are read again as
 * well. A token that merely expires is caught by a timer
 * (routes/changes.ts). Then it chooses the events of the entry the caller may see
 * (query/changeSelection.ts) and writes each one. When more than
 * CHANGE_FEED_MAX_BUFFERED_BYTES wait for the client, it ends with 4409: a
 * slow client never holds up the tenant or the other subscribers, and it
 * resumes with `since`. The node's budget for all streams together
 * (feedBudget.ts) may end it sooner, through its outlet, which tells it as
 * the client going away (`gone`). A resume from the log writes an entry only while
 * less than a quarter of that waits (`ready`), else it waits until the
 * client took what was written (`whenReady`).
 */
import type { EventTexts, Change } from '../../domain/changes.js'
import { accessTokenUser } from '../../domain/operations/tokens.js'
import type { TenantView } from '../../domain/tx.js'
import type { ChangeSelection } from '../../query/changeSelection.js'
import type { ChangeSubscriber, FeedEnd } from '../../tenants/changeFeed.js'
import { principalFor } from '../authenticate.js'
import type { Principal } from '../call.js'
import { FEED_CLOSE, type FeedClose, type FeedOutlet } from './feedOutlet.js'

const ENDS: Record<FeedEnd, FeedClose> = {
  stopping: FEED_CLOSE.stopping,
  moved: FEED_CLOSE.moved,
  historyRewritten: FEED_CLOSE.historyGone,
  historyGone: FEED_CLOSE.historyGone,
  failed: FEED_CLOSE.failed,
}

export class ChangeSubscription implements ChangeSubscriber {
  closed = false

  constructor(
    private principal: Principal,
    private readonly selection: ChangeSelection,
    private readonly outlet: FeedOutlet,
    private readonly maxBufferedBytes: number,
    /** Told once the subscription ends, from either side. */
    private readonly onClosed: () => void,
  ) {}

  deliver(changes: readonly Change[], texts: EventTexts, state: TenantView, accessChanged: boolean): void {
    if (this.closed) return
    if (accessChanged && !this.stillSignedIn(state, Date.now())) {
      this.close(FEED_CLOSE.accessLost)
      return
    }
    const chosen = this.selection.choose(this.principal, changes, texts)
    if (chosen.length === 0) return
    for (const event of chosen) this.outlet.send(event)
    if (this.outlet.bufferedBytes() > this.maxBufferedBytes) this.close(FEED_CLOSE.tooSlow)
  }

  /** Whether the token still signs its user in (the rule of authenticate.ts: accessTokenUser); refreshes the caller's rights. */
  stillSignedIn(state: TenantView, nowMs: number): boolean {
    const user = accessTokenUser(state, this.principal.tokenId, nowMs)
    if (typeof user === 'string' || user.id !== this.principal.userId) return false
    this.principal = principalFor(state, user, this.principal.tokenId)
    return true
  }

  ended(reason: FeedEnd): void {
    this.close(ENDS[reason])
  }

  ready(): boolean {
    return this.outlet.bufferedBytes() <= this.maxBufferedBytes / 4
  }

  whenReady(): Promise<void> {
    return this.outlet.drained()
  }

  /** Ends the stream from this side (the feed drops a closed subscriber). */
  close(end: FeedClose): void {
    if (this.closed) return
    this.closed = true
    this.outlet.close(end)
    this.onClosed()
  }

  /** The client went away. */
  gone(): void {
    if (this.closed) return
    this.closed = true
    this.onClosed()
  }
}
