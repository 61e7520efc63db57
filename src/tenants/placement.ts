/*
 * Placement: which node serves a tenant, the one question cluster mode adds
 * to the registry (ARCHITECTURE.md §8). The embedded default has no placement (every
 * tenant is this process's); in cluster mode src/cluster/ answers it from the
 * tenant's lease in PostgreSQL.
 *
 * The registry asks `acquire` before it activates a tenant: 'mine' once this
 * node holds the tenant's lease and the storage has what recovery reads
 * synchronously (its newest snapshot and the log after it), then
 * `recovered` once the actor is built; 'elsewhere' names the node that
 * holds a live lease (the HTTP layer forwards the request there). `serving`
 * is asked on every request for an active tenant, so it is a map lookup and
 * a clock compare: a node whose lease may have run out by its own clock
 * stops answering for the tenant before another node can take it. When the
 * placement finds a lease lost (a renewal refused, a fenced append) it tells
 * the registry through `onLost`, which drops the actor at once.
 */

export type Placed = { readonly kind: 'mine' } | { readonly kind: 'elsewhere'; readonly nodeUrl: string; readonly nodeId: string } | { readonly kind: 'unknown' }

export interface Placement {
  /** Claims the tenant for this node unless another node holds a live lease; 'unknown' for a tenant that does not exist. */
  acquire(tenant: string): Promise<Placed>
  /** The tenant's actor is built: what was fetched for its recovery may go. */
  recovered(tenant: string): void
  /** Claims the name of a tenant being created, before its first write; false when it is taken. */
  claimNew(tenant: string): Promise<boolean>
  /** This node stopped serving the tenant (put to rest, closed, shutting down): its lease is given back. */
  release(tenant: string): Promise<void>
  /** Whether this node may answer for the tenant now (its lease is live by this node's clock). */
  serving(tenant: string): boolean
  /** Where the registry hears of a tenant this node lost (an actor to drop at once). */
  onLost(listener: (tenant: string) => void): void
}
