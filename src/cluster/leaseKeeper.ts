/*
 * The leases this node holds, and their renewal (ARCHITECTURE.md §8).
 *
 * A lease is the database's: owner, epoch, expiry by the database's clock.
 * This node keeps, per tenant it holds, the epoch and a local deadline: the
 * moment by its own clock after which it no longer answers for the tenant.
 * Every renewal (one UPDATE for all held tenants, every third of the lease
 * time) starts at a local time t0; the database sets the expiry at its now
 * + LEASE_MS, which is after t0, so t0 + LEASE_MS - margin is a deadline
 * this node reaches before the lease really runs out (the margin covers
 * clocks that run at slightly different rates). A tenant the renewal does
 * not return was taken over (its epoch moved): it is lost at once. A
 * renewal that fails (the database unreachable) changes nothing; tenants
 * whose deadline passes meanwhile are lost when the next tick finds them so,
 * and `serving` refuses them already from their deadline on, so a paused
 * node that wakes up answers nothing for them even before a tick runs.
 * Local times are the monotonic clock's (performance.now()): setting the
 * wall clock moves no deadline.
 */
import type { ClusterStore } from './clusterStore.js'

interface Held {
  readonly epoch: number
  deadlineMs: number
}

/** Part of the lease kept as a safety margin against clocks running at different rates. */
const MARGIN_FRACTION = 0.1
const MIN_MARGIN_MS = 100

export class LeaseKeeper {
  private readonly held = new Map<string, Held>()
  private readonly lostListeners: ((tenant: string) => void)[] = []
  private timer: NodeJS.Timeout | null = null
  private renewing = false
  /** Renewals that failed since start (/metrics). */
  renewalFailures = 0
  /** Leases lost since start: taken over, or run out by this node's clock (/metrics). */
  lost = 0

  constructor(
    private readonly store: ClusterStore,
    private readonly nodeId: string,
    readonly leaseMs: number,
  ) {}

  private get marginMs(): number {
    return Math.max(MIN_MARGIN_MS, this.leaseMs * MARGIN_FRACTION)
  }

  /** Keeps a lease just claimed (the claim was sent at `sentAtMs`, performance.now()). */
  add(tenant: string, epoch: number, sentAtMs: number): void {
    this.held.set(tenant, { epoch, deadlineMs: sentAtMs + this.leaseMs - this.marginMs })
  }

  /** Forgets a lease (given back); answers its epoch, undefined when it was not held. */
  remove(tenant: string): number | undefined {
    const held = this.held.get(tenant)
    this.held.delete(tenant)
    return held?.epoch
  }

  epochOf(tenant: string): number | undefined {
    return this.held.get(tenant)?.epoch
  }

  /** Whether this node may answer for the tenant now: it holds the lease and its deadline is ahead. */
  serving(tenant: string): boolean {
    const held = this.held.get(tenant)
    return held !== undefined && performance.now() < held.deadlineMs
  }

  get count(): number {
    return this.held.size
  }

  tenants(): IterableIterator<string> {
    return this.held.keys()
  }

  onLost(listener: (tenant: string) => void): void {
    this.lostListeners.push(listener)
  }

  start(): void {
    this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)))
    this.timer.unref()
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }

  /** One renewal of every held lease (see the top); a tick that finds the previous one still running skips. */
  async renew(): Promise<void> {
    if (this.renewing) return
    this.renewing = true
    try {
      const sentAtMs = performance.now()
      const asked = [...this.held].map(([tenant, { epoch }]) => ({ tenant, epoch }))
      if (asked.length === 0) return
      let renewed: Set<string>
      try {
        renewed = new Set((await this.store.renew(asked, this.leaseMs)).tenants)
      } catch (error) {
        this.renewalFailures += 1
        console.error(`node '${this.nodeId}': lease renewal failed:`, error instanceof Error ? error.message : error)
        this.loseExpired()
        return
      }
      for (const { tenant, epoch } of asked) {
        const held = this.held.get(tenant)
        // Claimed again or given back while the renewal ran: that newer state stands.
        if (held === undefined || held.epoch !== epoch) continue
        if (renewed.has(tenant)) held.deadlineMs = Math.max(held.deadlineMs, sentAtMs + this.leaseMs - this.marginMs)
        else this.lose(tenant)
      }
    } finally {
      this.renewing = false
    }
  }

  /** The tenants whose deadline passed without a renewal are lost. */
  private loseExpired(): void {
    const nowMs = performance.now()
    for (const [tenant, held] of this.held) if (held.deadlineMs <= nowMs) this.lose(tenant)
  }

  private lose(tenant: string): void {
    this.held.delete(tenant)
    this.lost += 1
    console.error(`node '${this.nodeId}': lease of tenant '${tenant}' lost; the tenant is dropped here`)
    for (const listener of this.lostListeners) listener(tenant)
  }
}
