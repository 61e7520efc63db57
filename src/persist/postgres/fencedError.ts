/*
 * What a write of cluster mode rejects with when the node no longer holds
 * the tenant's lease at the epoch its writes carry (ARCHITECTURE.md §8, fencing):
 * another node took the tenant over, or this node never held it. The write
 * went in nowhere; the cluster layer drops the tenant on hearing it.
 */
export class FencedError extends Error {
  override name = 'FencedError'
  constructor(
    readonly tenant: string,
    /** The epoch the write carried; 0 when the tenant was not held. */
    readonly epoch: number,
  ) {
    super(epoch === 0 ? `tenant '${tenant}' is not held by this node` : `tenant '${tenant}': the lease at epoch ${epoch} is no longer this node's (another node took the tenant over)`)
  }
}
