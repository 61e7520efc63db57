/*
 * A tenant's writes against the store's ceiling (LMDB_MAP_SIZE_BYTES, see
 * persist/storeSpace.ts). While the store is full a write is refused with
 * StoreFull before it is decided (a batch, which decides first, is rolled
 * back by its commit), and the tenant reclaims the space of its own log
 * (logSpace.ts, held back to one reclaim per RECLAIM_MIN_INTERVAL_MS);
 * reads go on. Bytes a write stores beside its log entry (an upload) are
 * checked while it is decided, before they are put (refuseUnlessRoomFor,
 * handed to each WriteTx): FileTooLarge when they never could fit, StoreFull
 * while they do not now.
 */
import type { TenantState } from '../engine/tenantState.js'
import type { StoreCeiling, Storage } from '../persist/ports.js'
import { reclaimLogSpace, type SnapshotTaker } from './logSpace.js'
import { FileTooLarge, StoreFull } from './tenantErrors.js'

export interface GuardedTenant extends SnapshotTaker {
  readonly state: TenantState
}

export class SpaceGuard {
  private readonly space: StoreCeiling

  constructor(
    private readonly tenant: GuardedTenant,
    private readonly store: Storage,
    private readonly reclaimMinIntervalMs: number,
  ) {
    this.space = store.space
  }

  isFull(): boolean {
    return this.space.isFull()
  }

  /** Before a write is decided. */
  refuseWhileFull(): void {
    if (this.space.isFull()) this.refuseFull()
  }

  /** Starts a reclaim of this tenant's log (when one may start) and refuses the write. */
  refuseFull(): never {
    const { seq } = this.tenant.state
    if (seq > 0) reclaimLogSpace(this.tenant, seq, this.store, this.reclaimMinIntervalMs)
    throw new StoreFull(this.space.limitBytes)
  }

  /** Bytes a write stores beside its log entry (WriteTx.storeBeside); one function for every write of the tenant. */
  readonly refuseUnlessRoomFor = (bytes: number): void => {
    const { space } = this
    if (space.limitBytes > 0 && bytes >= space.limitBytes) throw new FileTooLarge(bytes, space.limitBytes)
    if (!space.hasRoomFor(bytes)) this.refuseFull()
  }
}
