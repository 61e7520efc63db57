/*
 * The webhooks of this server: a TenantWebhooks (tenantWebhooks.ts) for
 * every tenant whose state comes into memory here — activated, created,
 * woken, or recovered on a new node — told by the registry, and the counters
 * /metrics shows.
 *
 * After a restart no request may come for a tenant whose deliveries were
 * under way, so the tenants the directory marks as having an active webhook
 * (TenantInfo.webhooks, tenants/globalIndexes.ts) are woken at start
 * (wakeMarked), a few at a time; their workers go on from the cursors.
 * A tenant with a worker subscribed is not put to rest (the change feed's
 * subscribers keep it awake).
 *
 * Cluster mode: a node activates a tenant only under its lease, and the
 * registry tells this deliverer of every tenant it activates, so deliveries
 * follow the tenant to whichever node holds it. The directory keeps the
 * marker in PostgreSQL too, and each node wakes the marked tenants no node
 * holds a live lease of (`unheld`, asked of the database) — at start, and
 * again every lease period (keepWaking): when a node dies, its marked
 * tenants are woken by whichever node claims them first once the leases
 * ran out, with no request needed. Waking is the registry's ordinary
 * activation, which claims the lease; a tenant claimed meanwhile by another
 * node is refused (TenantElsewhere) and left to it.
 */
import type { Config } from '../config.js'
import type { TenantActor } from '../tenants/tenantActor.js'
import { TenantRefusal } from '../tenants/tenantErrors.js'
import type { TenantRegistry } from '../tenants/tenantRegistry.js'
import { TenantWebhooks } from './tenantWebhooks.js'
import type { WorkerContext } from './webhookWorker.js'

/** Marked tenants woken at once at start. */
const WAKE_CONCURRENCY = 4

export class WebhookDeliverer {
  /** Events delivered (2xx) since start. */
  delivered = 0
  /** Attempts that failed (non-2xx, network error, time limit) since start. */
  failedAttempts = 0
  /** Events given up after the retry limit since start. */
  failedEvents = 0
  private readonly tenants = new WeakMap<TenantActor, TenantWebhooks>()
  private closed = false
  private waking: NodeJS.Timeout | null = null
  private sweep: Promise<void> | null = null
  private readonly shared: Omit<WorkerContext, 'stopped'>

  constructor(
    private readonly registry: TenantRegistry,
    config: Config,
  ) {
    this.shared = {
      retry: { baseMs: config.webhookRetryBaseMs, maxDelayMs: config.webhookRetryMaxDelayMs, limitMs: config.webhookRetryLimitMs },
      timeoutMs: config.webhookTimeoutMs,
      allowPrivate: config.webhookAllowPrivate,
      counted: (outcome) => {
        if (outcome === 'delivered') this.delivered += 1
        else if (outcome === 'failedAttempt') this.failedAttempts += 1
        else this.failedEvents += 1
      },
    }
    registry.onActivated((actor) => this.activated(actor))
  }

  private activated(actor: TenantActor): void {
    if (this.closed) return
    let webhooks = this.tenants.get(actor)
    if (webhooks === undefined) {
      webhooks = new TenantWebhooks(actor, this.shared)
      this.tenants.set(actor, webhooks)
    }
    webhooks.refresh()
  }

  /**
   * Wakes the tenants marked as having an active webhook that are not active here; `unheld` (cluster mode) keeps
   * those of them no node holds now.
   */
  async wakeMarked(unheld?: (tenants: string[]) => Promise<string[]>): Promise<void> {
    const active = new Set<string>()
    for (const actor of this.registry.active()) active.add(actor.tenant)
    let marked = this.registry.names().filter((tenant) => !active.has(tenant) && this.registry.directory.webhooksMarked(tenant))
    if (unheld !== undefined && marked.length > 0) marked = await unheld(marked)
    const wake = async (): Promise<void> => {
      for (let tenant = marked.shift(); tenant !== undefined && !this.closed; tenant = marked.shift()) {
        try {
          await this.registry.open(tenant)
        } catch (error) {
          if (!(error instanceof TenantRefusal)) console.error(`tenant '${tenant}': waking it for its webhooks failed:`, error)
        }
      }
    }
    await Promise.all(Array.from({ length: WAKE_CONCURRENCY }, wake))
  }

  /** Cluster mode: wakes the marked tenants nobody holds now and every `everyMs` after (see the top). */
  keepWaking(everyMs: number, unheld: (tenants: string[]) => Promise<string[]>): void {
    const sweep = () => {
      if (this.closed || this.sweep !== null) return
      this.sweep = this.wakeMarked(unheld)
        .catch((error: unknown) => console.error('waking the tenants with webhooks failed:', error instanceof Error ? error.message : error))
        .finally(() => (this.sweep = null))
    }
    sweep()
    this.waking = setInterval(sweep, everyMs)
    this.waking.unref()
  }

  /** Stops every delivery (before the registry closes). */
  close(): void {
    this.closed = true
    if (this.waking !== null) clearInterval(this.waking)
    this.waking = null
    for (const actor of this.registry.active()) this.tenants.get(actor)?.close()
  }
}
