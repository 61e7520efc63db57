/*
 * What the cluster layer asks of its store beyond the persistence ports
 * (persist/ports.ts): the leases and the membership table, the epoch each
 * held tenant's writes are fenced with, the prefetch that lets recovery
 * read a tenant synchronously, and one-row reads of the tenant directory.
 * The PostgreSQL storage (persist/postgres/) is its implementation; the
 * database's clock decides expiry, this node's clock only when to stop
 * serving (leaseKeeper.ts).
 */
import type { ClaimResult, LeaseRow, NodeRow, PrepareOptions } from '../persist/postgres/index.js'
import type { Storage, TenantInfo } from '../persist/ports.js'

export type { LeaseRow, NodeRow }

/** The store's members the cluster layer uses; the store knows the node (or operator) id it was opened as. */
export interface ClusterStore extends Storage {
  /** Claims the tenant's lease for this node unless another holds a live one (the database's clock decides). */
  claim(tenant: string, leaseMs: number): Promise<ClaimResult>
  /** Extends the leases this node still holds at those epochs; answers the tenants renewed. */
  renew(held: readonly { tenant: string; epoch: number }[], leaseMs: number): Promise<{ tenants: string[] }>
  release(tenant: string, epoch: number): Promise<boolean>
  leaseOf(tenant: string): Promise<LeaseRow | undefined>
  leases(): Promise<LeaseRow[]>
  /** Those of `tenants` some node holds a live lease of now. */
  liveLeased(tenants: readonly string[]): Promise<string[]>
  /** The epoch this node's writes of the tenant carry (fencing); unhold: they are refused. */
  hold(tenant: string, epoch: number): void
  unhold(tenant: string): void
  /** Loads what recovery reads synchronously; forget drops it once the actor is built. */
  prepare(tenant: string, options?: PrepareOptions): Promise<void>
  forget(tenant: string): void
  /** Reads one tenant's directory row from the database (and updates this node's mirror). */
  refreshTenant(name: string): Promise<TenantInfo | undefined>
  registerNode(internalUrl: string): Promise<void>
  heartbeat(): Promise<boolean>
  nodes(): Promise<NodeRow[]>
  close(): Promise<void>
}
