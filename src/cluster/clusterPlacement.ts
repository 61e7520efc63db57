/*
 * Placement in cluster mode (tenants/placement.ts): a tenant is this node's
 * while it holds the tenant's lease in PostgreSQL.
 *
 * acquire: a tenant the directory does not know is 'unknown' (the mirror
 * first, then one row from the database: a tenant just created on another
 * node may not have reached this node's mirror yet). Otherwise one
 * conditional claim: it succeeds when nobody holds a live lease (or this
 * node does), incrementing the epoch on a takeover; the storage is told the
 * epoch its appends must carry (fencing) and fetches what recovery reads.
 * A live lease of another node answers 'elsewhere' with that node's
 * internal URL (membership.ts).
 *
 * claimNew: a tenant being created claims its name first; the lease row's
 * primary key makes that claim win on one node only. release gives a
 * lease back at once (a clean shutdown, an eviction), so another node may
 * claim the tenant without waiting for it to run out. A tenant handed back
 * to an operator (releaseCall.ts) is not claimed again for a short while.
 */
import type { Placed, Placement } from '../tenants/placement.js'
import { directoryRow } from '../tenants/tenantDirectory.js'
import type { ClusterStore } from './clusterStore.js'
import type { LeaseKeeper } from './leaseKeeper.js'
import type { Membership } from './membership.js'
import { HAND_BACK_MS } from './releaseCall.js'

export class ClusterPlacement implements Placement {
  /** Another node may take a tenant this one lets go of (placement.ts). */
  readonly keepsTenants = false
  /** Tenants claimed by this node since start, and those among them taken over from another node (/metrics). */
  claims = 0
  takeovers = 0
  /** Tenants handed back to an operator (releaseCall.ts), until when this node leaves them alone. */
  private readonly handedBack = new Map<string, number>()

  constructor(
    private readonly store: ClusterStore,
    private readonly keeper: LeaseKeeper,
    private readonly membership: Membership,
  ) {}

  private get nodeId(): string {
    return this.membership.nodeId
  }

  async acquire(tenant: string): Promise<Placed> {
    const handedBackUntilMs = this.handedBack.get(tenant)
    if (handedBackUntilMs !== undefined) {
      if (Date.now() < handedBackUntilMs) return { kind: 'elsewhere', nodeId: 'operator', nodeUrl: '' }
      this.handedBack.delete(tenant)
    }
    if (directoryRow(this.store, tenant) === undefined && (await this.store.refreshTenant(tenant)) === undefined) return { kind: 'unknown' }
    const claimed = await this.claim(tenant)
    if (claimed !== true) return claimed
    await this.store.prepare(tenant)
    return { kind: 'mine' }
  }

  /** Claims the tenant's lease: true once held here, else where its live lease is. */
  private async claim(tenant: string): Promise<true | Placed> {
    const previousEpoch = this.keeper.epochOf(tenant)
    const sentAtMs = performance.now()
    const result = await this.store.claim(tenant, this.keeper.leaseMs)
    if (!result.held) {
      const nodeUrl = await this.membership.urlOf(result.owner)
      // An owner missing from the nodes table is gone for good; its lease runs out soon, so the caller retries.
      return { kind: 'elsewhere', nodeId: result.owner, nodeUrl: nodeUrl ?? '' }
    }
    if (previousEpoch !== result.epoch) {
      this.claims += 1
      if (result.epoch > 1) this.takeovers += 1
    }
    this.keeper.add(tenant, result.epoch, sentAtMs)
    this.store.hold(tenant, result.epoch)
    return true
  }

  recovered(tenant: string): void {
    this.store.forget(tenant)
  }

  async claimNew(tenant: string): Promise<boolean> {
    if ((await this.store.refreshTenant(tenant)) !== undefined) return false
    if ((await this.claim(tenant)) !== true) return false
    // Nothing to load, but the synchronous reads of the tenant (its last sequence number, its snapshots) answer from here.
    await this.store.prepare(tenant)
    return true
  }

  async release(tenant: string): Promise<void> {
    this.store.unhold(tenant)
    const epoch = this.keeper.remove(tenant)
    if (epoch === undefined) return
    try {
      await this.store.release(tenant, epoch)
    } catch (error) {
      // The lease then runs out by itself.
      console.error(`node '${this.nodeId}': giving back the lease of '${tenant}' failed:`, error instanceof Error ? error.message : error)
    }
  }

  /** An operator takes the tenant (releaseCall.ts): for HAND_BACK_MS this node does not claim it again. */
  handBack(tenant: string): void {
    this.handedBack.set(tenant, Date.now() + HAND_BACK_MS)
  }

  serving(tenant: string): boolean {
    return this.keeper.serving(tenant)
  }

  onLost(listener: (tenant: string) => void): void {
    this.keeper.onLost((tenant) => {
      this.store.unhold(tenant)
      listener(tenant)
    })
  }
}
