/*
 * MAX_ACTIVE_TENANTS: past the cap, the least recently used tenants are put
 * to rest (TenantRegistry.evict), never the one just activated. Like the
 * idle sweep (idleSweeper.ts) it only decides which tenant goes; the
 * eviction itself re-checks inside the tenant's exclusive job and gives up
 * when a request came meanwhile. Then the cap is checked again
 * CAP_RECHECK_MS later, so it is never left exceeded until the next
 * activation.
 */
import type { TenantActor } from './tenantActor.js'

/** How long after an eviction for the cap gave up the cap is checked again. */
const CAP_RECHECK_MS = 50

/** What the cap asks of the registry. */
export interface CappedTenants {
  /** Tenants in memory, less those being put to rest now. */
  stayingCount(): number
  /** Tenants in memory that are not being put to rest now. */
  staying(): TenantActor[]
  /** Puts the tenant to rest; false when it gave up. */
  evict(tenant: string): Promise<boolean>
}

export class ActiveTenantCap {
  /** The pending re-check, if any. */
  private recheck: NodeJS.Timeout | null = null
  private stopped = false

  constructor(
    /** MAX_ACTIVE_TENANTS; 0: no cap. */
    private readonly max: number,
    private readonly tenants: CappedTenants,
  ) {}

  /** Puts the least recently used tenants past the cap to rest (not `keep`, the one just activated). */
  enforce(keep: TenantActor | null): void {
    const excess = this.tenants.stayingCount() - this.max
    if (this.max === 0 || excess <= 0 || this.stopped) return
    const candidates = this.tenants.staying().filter((actor) => actor !== keep)
    candidates.sort((a, b) => a.lastUsedMs - b.lastUsedMs)
    for (const actor of candidates.slice(0, excess)) {
      this.tenants.evict(actor.tenant).then(
        (rested) => {
          if (!rested) this.recheckSoon()
        },
        (error: unknown) => console.error(`evicting tenant '${actor.tenant}' failed:`, error),
      )
    }
  }

  /** The registry closes: nothing more is put to rest for the cap. */
  stop(): void {
    this.stopped = true
    if (this.recheck !== null) clearTimeout(this.recheck)
  }

  private recheckSoon(): void {
    if (this.recheck !== null || this.stopped) return
    this.recheck = setTimeout(() => {
      this.recheck = null
      this.enforce(null)
    }, CAP_RECHECK_MS)
    this.recheck.unref()
  }
}
