/*
 * Cluster mode's storage on PostgreSQL (ARCHITECTURE.md §8), for the wiring and the
 * cluster layer:
 *
 *   openPgStorage(url, { nodeId, onNotice? }) → PgStorage
 *       migrates the schema (refusing a newer one: SchemaTooNewError), loads
 *       the directory mirror, listens for the other nodes' changes.
 *   PgStorage implements Storage (ports.ts), plus:
 *     hold(tenant, epoch) / unhold(tenant) / heldEpoch(tenant)
 *         the lease epoch the tenant's writes carry; a write of a tenant not
 *         held, or whose epoch moved on, rejects with FencedError (its
 *         directory writes resolve false).
 *     prepare(tenant, { wholeLog?, uptoSeq?, everySnapshot? }) / forget(tenant)
 *         load what the synchronous log and snapshot reads answer from (the
 *         newest good snapshot or every good one, the entries after it or
 *         all of them); drop the bytes after recovery (lastSeq & co. stay
 *         right while held).
 *     refreshTenant(name) → TenantInfo | undefined   one directory row, read
 *         from the database into the mirror.
 *     claim(tenant, leaseMs) → ClaimResult; renew(held, leaseMs);
 *     release(tenant, epoch); leaseOf(tenant); leases(); liveLeased(tenants)   lease rows, by the
 *         database's clock (answers carry its time, nowMs).
 *     registerNode(internalUrl); heartbeat(); nodes()   membership.
 *     close()   waits for the group in flight, ends the connections.
 */
export { openPgStorage, PgStorage } from './pgStorage.js'
export { FencedError } from './fencedError.js'
export { SchemaTooNewError, SCHEMA_VERSION } from './pgMigrations.js'
export type { ClaimResult, LeaseRow } from './leases.js'
export type { NodeRow } from './membership.js'
export type { PrepareOptions } from './preparedTenant.js'
