/*
 * A transaction of one tenant's writes outside the group commit (pruning,
 * truncation, snapshots), fenced by its lease as the group commit's are: it
 * first locks the tenant's lease row FOR SHARE where the epoch is still the
 * one this node holds it at, and throws FencedError (rolling back) when no
 * such row exists. The lock holds until COMMIT, so a takeover waits for it.
 * Such work may run twice (deletions, a snapshot replaced whole), so it is
 * run again on a lost connection (connection.ts).
 */
import { retryingLostConnection, type Sql, type TxSql } from './connection.js'
import { FencedError } from './fencedError.js'

export async function fencedTransaction<T>(sql: Sql, tenant: string, epoch: number | undefined, work: (tx: TxSql) => Promise<T>): Promise<T> {
  if (epoch === undefined) throw new FencedError(tenant, 0)
  return retryingLostConnection(
    () =>
      sql.begin(async (tx) => {
        const locked = await tx`SELECT 1 FROM leases WHERE tenant = ${tenant} AND epoch = ${String(epoch)} FOR SHARE`
        if (locked.length === 0) throw new FencedError(tenant, epoch)
        return work(tx)
      }) as Promise<T>,
  )
}
