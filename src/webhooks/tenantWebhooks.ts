/*
 * The webhooks of one loaded tenant: a worker (webhookWorker.ts) per webhook
 * that delivers (live, active), made, kept or replaced by `refresh`, which
 * compares the tenant's Webhook records with the workers:
 *
 *   a delivering webhook without a worker, or whose url, resources, filter,
 *   secret or creator changed                       → a new worker (from the cursor)
 *   a worker paused, whose creator is a superuser again → a new worker
 *   a worker that stopped by itself (a failed write, history lost) → a new worker
 *   a worker whose webhook no longer delivers       → stopped
 *
 * It runs when the tenant is loaded (webhookDeliverer.ts), after every
 * durable entry that wrote a Webhook, a User or the Account (the feed's
 * entry watcher: creating, changing, deactivating, trashing or restoring a
 * webhook, and changes of who is a superuser), after the history was
 * rewritten (online restore), and a moment after a worker stopped by itself.
 */
import { Webhook } from '../domain/resources/webhook.js'
import { webhookCallerOf, webhookDelivers } from '../domain/webhooks.js'
import type { TenantActor } from '../tenants/tenantActor.js'
import { configKeyOf, WebhookWorker, type WorkerContext } from './webhookWorker.js'

/** Writes of these types may change which webhooks deliver, or as whom. */
const WATCHED_TYPES: ReadonlySet<string> = new Set([Webhook.type, 'User', 'Account'])

/** The least wait before a worker that stopped by itself is replaced. */
const RESTART_DELAY_MS = 1000

export class TenantWebhooks {
  private readonly workers = new Map<string, WebhookWorker>()
  private refreshTimer: NodeJS.Timeout | null = null
  private closed = false
  private readonly context: WorkerContext

  constructor(
    private readonly actor: TenantActor,
    shared: Omit<WorkerContext, 'stopped'>,
  ) {
    this.context = Object.assign({}, shared, { stopped: () => this.refreshSoon(Math.max(RESTART_DELAY_MS, shared.retry.baseMs)) })
    actor.changes.watch((_seq, entry) => {
      if (entry === null || entry.ops.some((op) => WATCHED_TYPES.has(op.type))) this.refreshSoon(0)
    })
  }

  /** Workers delivering or paused (tests, metrics). */
  get workerCount(): number {
    return this.workers.size
  }

  refreshSoon(delayMs: number): void {
    if (this.refreshTimer !== null || this.closed) return
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null
      this.refresh()
    }, delayMs)
    this.refreshTimer.unref()
  }

  /** Brings the workers in line with the tenant's webhooks (see the top). */
  refresh(): void {
    // A resting tenant has no workers (they would have kept it awake); touching its state would load it.
    if (this.closed || this.actor.resting) return
    let state: TenantActor['state']
    try {
      state = this.actor.state
    } catch {
      return // released to another node: nothing of it runs here any more
    }
    const delivering = new Set<string>()
    for (const webhook of state.collection(Webhook.type).values()) {
      if (!webhookDelivers(webhook)) continue
      delivering.add(webhook.id)
      const worker = this.workers.get(webhook.id)
      if (worker !== undefined && worker.configKey === configKeyOf(webhook)) {
        if (worker.paused ? webhookCallerOf(state, webhook).paused !== null : !worker.stopped) continue
      }
      worker?.stop()
      const fresh = new WebhookWorker(this.actor, webhook.id, webhook, this.context)
      this.workers.set(webhook.id, fresh)
      fresh.start()
    }
    for (const [id, worker] of this.workers) {
      if (delivering.has(id)) continue
      worker.stop()
      this.workers.delete(id)
    }
  }

  /** Stops every worker (the server stops). */
  close(): void {
    this.closed = true
    if (this.refreshTimer !== null) clearTimeout(this.refreshTimer)
    for (const worker of this.workers.values()) worker.stop()
    this.workers.clear()
  }
}
