/*
 * The deliveries of one webhook in one loaded tenant: a subscriber of the
 * tenant's change feed from the webhook's cursor (`deliveredEvent`), a
 * queue of the events chosen for it (ChangeSelection, as the webhook's
 * creator may see them), and a pump that POSTs the queue's head until it is
 * delivered or given up, then the next: one event at a time, in order.
 *
 * The outbox is the log. Nothing but the cursor is kept durably: after a
 * 2xx the event's WebhookDelivery and the moved cursor are written in one
 * tenant write (operations/webhooks.ts); a crash before that write sends the
 * event again after the restart (at least once; receivers de-duplicate by
 * X-TimeLedger-Event). A failed attempt is written too (`retrying`, with its
 * attempts and the next attempt's time), so the retry limit counts from the
 * first failure across restarts. The queue is bounded: past MAX_QUEUED the
 * subscription is dropped with what it queued, and once the pump has sent
 * what is left, the worker subscribes again from the cursor.
 *
 * A worker stops (for good; tenantWebhooks.ts makes a new one) when the
 * webhook changes or stops delivering, when its creator is no longer an
 * active superuser (paused, with the reason in lastError), when the feed
 * ends it (server stopping, tenant moved, history rewritten), or when a
 * write of its state fails.
 */
import { eventResourceOf, type Change, type EventTexts } from '../domain/changes.js'
import { deliveryIdOf, noteWebhookState, recordDelivery, type DeliveryOutcome } from '../domain/operations/webhooks.js'
import { Webhook } from '../domain/resources/webhook.js'
import { WebhookDelivery } from '../domain/resources/webhookDelivery.js'
import type { Rec } from '../domain/schema.js'
import { webhookCallerOf } from '../domain/webhooks.js'
import { webhookUrl } from '../domain/webhookAddress.js'
import { ChangeSelection, type ChosenEvent } from '../query/changeSelection.js'
import type { ChangeSubscriber, EventPosition, FeedEnd } from '../tenants/changeFeed.js'
import type { TenantActor } from '../tenants/tenantActor.js'
import { nextAttemptAt, type RetryPolicy } from './retryDelay.js'
import { postEvent, type PostResult } from './webhookPost.js'

/** Events queued per webhook before the subscription is dropped (see the top). */
const MAX_QUEUED = 1000

/** What the workers share: the settings and the counters (webhookDeliverer.ts). */
export interface WorkerContext {
  readonly retry: RetryPolicy
  readonly timeoutMs: number
  readonly allowPrivate: boolean
  /** Counts an attempt's result (metrics). */
  counted(outcome: 'delivered' | 'failedAttempt' | 'failed'): void
  /** Told when a worker stopped by itself (tenantWebhooks.ts may start another). */
  stopped(worker: WebhookWorker): void
}

/** The fields whose change restarts the deliveries. */
export function configKeyOf(webhook: Rec): string {
  return JSON.stringify([webhook.url, webhook.resources, webhook.filter, webhook.secret, webhook.user])
}

/** A cursor `<seq>` or `<seq>.<op>` as a feed position. */
function positionOf(cursor: unknown): EventPosition | null {
  const match = typeof cursor === 'string' ? /^(\d+)(?:\.(\d+))?$/.exec(cursor) : null
  if (match === null) return null
  return { seq: Number(match[1]), op: match[2] === undefined ? null : Number(match[2]) }
}

/** One subscription of a worker (a dropped one is never reused). */
class Subscription implements ChangeSubscriber {
  closed = false
  constructor(private readonly worker: WebhookWorker) {}
  deliver(changes: readonly Change[], texts: EventTexts): void {
    if (!this.closed) this.worker.take(this, changes, texts)
  }
  ended(reason: FeedEnd): void {
    this.closed = true
    this.worker.subscriptionEnded(this, reason)
  }
  ready(): boolean {
    return this.worker.hasRoom()
  }
  whenReady(): Promise<void> {
    return this.worker.roomForMore()
  }
}

export class WebhookWorker {
  readonly configKey: string
  /** Set when paused (the creator is no longer an active superuser): started again once they are. */
  paused = false
  private stoppedForGood = false
  private subscription: Subscription | null = null
  private queue: ChosenEvent[] = []
  /** The subscription was dropped for a full queue: subscribe again from the cursor once the queue is sent. */
  private overflowed = false
  private pumping = false
  private wakeTimer: NodeJS.Timeout | null = null
  private wakeUp: (() => void) | null = null
  private readonly roomWaiters: (() => void)[] = []
  private selection: ChangeSelection | null = null
  private url: URL | null = null

  constructor(
    private readonly actor: TenantActor,
    readonly webhookId: string,
    webhook: Rec,
    private readonly context: WorkerContext,
  ) {
    this.configKey = configKeyOf(webhook)
  }

  get stopped(): boolean {
    return this.stoppedForGood
  }

  /** Starts delivering from the webhook's cursor (or pauses, with the reason written). */
  start(): void {
    const webhook = this.webhook()
    if (webhook === undefined) {
      this.stop()
      return
    }
    const who = webhookCallerOf(this.actor.state, webhook)
    if (who.paused !== null) {
      this.paused = true
      this.writeState(who.paused)
      return
    }
    try {
      this.selection = ChangeSelection.parse({ resources: (webhook.resources as string | null) ?? '', filter: (webhook.filter as string | null) ?? '' })
      this.url = webhookUrl(String(webhook.url), this.context.allowPrivate)
    } catch (error) {
      this.paused = true
      this.writeState(`paused: ${error instanceof Error ? error.message : String(error)}`)
      return
    }
    this.subscribe()
  }

  /** Stops for good: the subscription goes, a retry's wait ends, nothing more is written. */
  stop(): void {
    if (this.stoppedForGood) return
    this.stoppedForGood = true
    this.dropSubscription()
    this.queue = []
    if (this.wakeTimer !== null) clearTimeout(this.wakeTimer)
    this.wakeUp?.()
    for (const waiter of this.roomWaiters.splice(0)) waiter()
  }

  private webhook(): Rec | undefined {
    return this.actor.state.get(Webhook.type, this.webhookId)
  }

  private subscribe(): void {
    const cursor = positionOf(this.webhook()?.deliveredEvent)
    const subscription = new Subscription(this)
    this.subscription = subscription
    this.overflowed = false
    this.actor.changes.subscribe(subscription, cursor ?? { seq: this.actor.changes.publishedSeq, op: null }).catch((error: unknown) => {
      if (this.subscription !== subscription) return
      console.error(`tenant '${this.actor.tenant}': webhook ${this.webhookId} could not resume from its cursor:`, error instanceof Error ? error.message : error)
      this.writeState(`paused: cannot resume from event ${String(this.webhook()?.deliveredEvent)}: ${error instanceof Error ? error.message : String(error)}`)
      this.stopAndTell()
    })
  }

  private dropSubscription(): void {
    const subscription = this.subscription
    if (subscription === null) return
    this.subscription = null
    subscription.closed = true
    this.actor.changes.unsubscribe(subscription)
  }

  /** The changes of one entry, from the subscription: the events chosen for the webhook are queued. */
  take(subscription: Subscription, changes: readonly Change[], texts: EventTexts): void {
    if (subscription !== this.subscription || this.selection === null) return
    const own = changes.filter((change) => change.decl !== Webhook && change.decl !== WebhookDelivery)
    if (own.length === 0) return
    const webhook = this.webhook()
    const who = webhook === undefined ? null : webhookCallerOf(this.actor.state, webhook)
    if (who === null || who.caller === null) {
      // The creator lost their rights: the queue and the subscription go, the cursor stays (tenantWebhooks.ts restarts).
      this.paused = true
      if (who !== null) this.writeState(who.paused as string)
      this.stopAndTell()
      return
    }
    for (const event of this.selection.choose(who.caller, own, texts)) this.queue.push(event)
    if (this.queue.length > MAX_QUEUED) {
      this.dropSubscription()
      this.queue.length = MAX_QUEUED
      this.overflowed = true
    }
    void this.pump()
  }

  subscriptionEnded(subscription: Subscription, reason: FeedEnd): void {
    if (subscription !== this.subscription) return
    this.subscription = null
    // The server stops, or the tenant left this actor (renamed, released): whoever loads it next starts anew.
    if (reason === 'stopping' || reason === 'moved') {
      this.stop()
      return
    }
    if (reason === 'historyGone') {
      const seq = this.actor.changes.publishedSeq
      this.writeState(`events after ${String(this.webhook()?.deliveredEvent)} were pruned from the log before they were delivered; deliveries go on after entry ${seq}`, String(seq))
    }
    this.stopAndTell()
  }

  /** Resolves once the queue has room for a resume's next slice. */
  /** Whether a resume may hand over the next entry now. */
  hasRoom(): boolean {
    return this.queue.length < MAX_QUEUED / 2 || this.stoppedForGood
  }

  roomForMore(): Promise<void> {
    if (this.hasRoom()) return Promise.resolve()
    return new Promise((resolve) => this.roomWaiters.push(resolve))
  }

  private stopAndTell(): void {
    if (this.stoppedForGood) return
    this.stop()
    this.context.stopped(this)
  }

  private async pump(): Promise<void> {
    if (this.pumping) return
    this.pumping = true
    try {
      for (;;) {
        if (this.stoppedForGood) return
        const next = this.queue[0]
        if (next === undefined) {
          if (this.overflowed && this.subscription === null) this.subscribe()
          return
        }
        if (!(await this.deliverOne(next))) return
        this.queue.shift()
        if (this.queue.length < MAX_QUEUED / 2) for (const waiter of this.roomWaiters.splice(0)) waiter()
      }
    } finally {
      this.pumping = false
    }
  }

  /** Posts the event until it is delivered or given up; false when the worker stopped meanwhile. */
  private async deliverOne(event: ChosenEvent): Promise<boolean> {
    const { change } = event
    const eventId = `${change.seq}.${change.op}`
    // A retry that a restart interrupted goes on with its attempts and its first failure's time.
    const earlier = this.actor.state.get(WebhookDelivery.type, deliveryIdOf(this.webhookId, eventId))
    let attempts = earlier?.status === 'retrying' ? (earlier.attempts as number) : 0
    let firstAttemptAt = earlier?.status === 'retrying' ? (earlier.firstAttemptAt as number) : null
    for (;;) {
      const webhook = this.webhook()
      if (this.stoppedForGood || webhook === undefined || this.url === null) return false
      const at = Date.now()
      firstAttemptAt ??= at
      attempts += 1
      const result: PostResult = await postEvent({
        url: this.url,
        webhookId: this.webhookId,
        secret: String(webhook.secret),
        eventId,
        body: event.json,
        timeoutMs: this.context.timeoutMs,
        allowPrivate: this.context.allowPrivate,
      })
      if (this.stoppedForGood) return false
      const base = { event: eventId, resource: eventResourceOf(change.decl) ?? '', kind: change.kind, objectId: change.id, attempts, responseStatus: result.status, firstAttemptAt, lastAttemptAt: at }
      if (result.ok) {
        this.context.counted('delivered')
        return this.record({ ...base, status: 'delivered', lastError: null, nextAttemptAt: null, deliveredAt: Date.now() })
      }
      this.context.counted('failedAttempt')
      const next = nextAttemptAt(attempts, firstAttemptAt, Date.now(), this.context.retry)
      if (next === null) {
        this.context.counted('failed')
        return this.record({ ...base, status: 'failed', lastError: result.error, nextAttemptAt: null, deliveredAt: null })
      }
      if (!(await this.record({ ...base, status: 'retrying', lastError: result.error, nextAttemptAt: next, deliveredAt: null }))) return false
      await this.sleepUntil(next)
    }
  }

  /** Writes an outcome; false (and the worker stops) when the webhook no longer delivers or the write failed. */
  private async record(outcome: DeliveryOutcome): Promise<boolean> {
    try {
      const written = await this.actor.write((tx) => recordDelivery(tx, this.webhookId, outcome))
      if (!written) this.stopAndTell()
      return written && !this.stoppedForGood
    } catch (error) {
      if (!this.stoppedForGood) console.error(`tenant '${this.actor.tenant}': webhook ${this.webhookId}: writing a delivery failed:`, error instanceof Error ? error.message : error)
      this.stopAndTell()
      return false
    }
  }

  private writeState(lastError: string, deliveredEvent?: string): void {
    this.actor
      .write((tx) => noteWebhookState(tx, this.webhookId, lastError, deliveredEvent))
      .catch((error: unknown) => {
        console.error(`tenant '${this.actor.tenant}': webhook ${this.webhookId}: writing its state failed:`, error instanceof Error ? error.message : error)
      })
  }

  private sleepUntil(atMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.wakeTimer = null
        this.wakeUp = null
        resolve()
      }
      this.wakeUp = done
      this.wakeTimer = setTimeout(done, Math.max(0, atMs - Date.now()))
    })
  }
}
