/*
 * Tenants closed as damaged. A tenant whose snapshot or log cannot be
 * recovered (an entry that cannot be decoded or applied, a gap:
 * ARCHITECTURE.md §2.6) is remembered here, in memory, with the reason: its
 * later requests get the same 503 at once instead of a new recovery each
 * (which would read and replay the tenant synchronously, holding up every
 * tenant), while the other tenants serve. An online restore reopens it
 * (reopen); a restart, e.g. after an offline restore, forgets it and tries
 * again.
 */
import { assert } from '../assert.js'
import { LogCorruptError } from '../persist/ports.js'
import { RecoveryError } from './recovery.js'
import { TenantClosed } from './tenantErrors.js'

export class ClosedTenants {
  /** Closed tenants, with the reason. */
  private readonly reasons = new Map<string, string>()
  /** Recoveries that failed since start (each closes a tenant; a closed tenant is not tried again). */
  failedRecoveries = 0

  /** Closed tenants, with the reason. */
  get all(): ReadonlyMap<string, string> {
    return this.reasons
  }

  /** TenantClosed for a closed tenant. */
  refuse(tenant: string): void {
    const reason = this.reasons.get(tenant)
    if (reason !== undefined) throw new TenantClosed(tenant, reason)
  }

  /** Runs `load` (which loads a tenant from disk); a tenant whose snapshot or log is damaged is closed and answers 503. */
  loadOrClose<T>(tenant: string, load: () => T): T {
    try {
      return load()
    } catch (error) {
      throw this.closedFor(tenant, error)
    }
  }

  /** loadOrClose for a load that runs across event-loop turns. */
  async loadOrCloseInTurns<T>(tenant: string, load: () => Promise<T>): Promise<T> {
    try {
      return await load()
    } catch (error) {
      throw this.closedFor(tenant, error)
    }
  }

  /** Forgets that a tenant could not be recovered (a restore has put a new state on disk); its next request loads it. */
  reopen(tenant: string): void {
    this.reasons.delete(tenant)
  }

  /** The error to throw for a load that failed: a damaged tenant stays closed until an operator restores it. */
  private closedFor(tenant: string, error: unknown): unknown {
    if (!(error instanceof LogCorruptError || error instanceof RecoveryError)) return error
    // The others are unaffected.
    console.error(`tenant '${tenant}' cannot be recovered: ${error.message}`)
    this.reasons.set(tenant, error.message)
    this.failedRecoveries += 1
    assert(this.reasons.size <= this.failedRecoveries, 'a tenant closed without a failed recovery')
    return new TenantClosed(tenant, error.message)
  }
}
