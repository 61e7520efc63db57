/*
 * Reload after a failed append (disk or map full): memory must never hold a
 * change the log does not. As an exclusive job of the tenant (its requests
 * wait), the log is flushed, everything from the failed entry on is
 * truncated, and the state is recovered from disk (newest snapshot + the
 * log); the tenant then takes it and resets its durability barrier
 * (durabilityBarrier.ts). Until then its writes are refused with
 * WritesUnavailable, and callers may retry.
 */
import type { Storage } from '../persist/ports.js'
import { recoverTenant, type Recovered } from './recovery.js'
import { TenantRefusal } from './tenantErrors.js'

export interface ReloadableTenant {
  readonly tenant: string
  exclusive<T>(job: () => Promise<T>): Promise<T>
  /** Takes the state recovered after a failed append. */
  reloadedAfterFailure(recovered: Recovered): void
}

export function reloadAfterFailedAppend(tenant: ReloadableTenant, store: Storage, seq: number, error: unknown): void {
  console.error(`tenant '${tenant.tenant}': log append of entry ${seq} failed, reloading from disk:`, error instanceof Error ? error.message : error)
  tenant
    .exclusive(async () => {
      await store.flushed().catch(() => undefined)
      await store.truncateAfter(tenant.tenant, seq - 1).catch(() => undefined)
      tenant.reloadedAfterFailure(recoverTenant(tenant.tenant, store))
    })
    .catch((refused: unknown) => {
      // Renamed away or released meanwhile: nothing is served from this actor any more. Anything else stays fatal.
      if (!(refused instanceof TenantRefusal)) throw refused
    })
}
