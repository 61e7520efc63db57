/*
 * The lease rows (ARCHITECTURE.md §8): one per tenant, naming the node that may
 * write it, until when, and the epoch its writes carry. Only SQL here; the
 * cluster layer decides when to claim, renew and let go.
 *
 * Every expiry is decided by the database's clock (now()), never a node's,
 * and each claim and renewal answers the database's time too, so a node can
 * keep its own deadline from it. A claim is one statement: it inserts the
 * row of a tenant nobody ever held (the primary key makes two nodes
 * creating one tenant name impossible: the second finds the first's live
 * lease), takes an expired lease with the epoch one higher, or extends a
 * live lease that is already this node's at the same epoch. A lease of
 * this node that expired is taken anew at the next epoch like anyone
 * else's: writes of this node's earlier holding still in flight are fenced
 * off as a stale owner's would be. A release makes the lease expire now
 * (the row stays: the tenant's name stays taken).
 */
import { assert } from '../../assert.js'
import type { Sql } from './connection.js'

export interface LeaseRow {
  tenant: string
  owner: string
  epoch: number
  expiresAtMs: number
}

export type ClaimResult =
  /** This node holds the tenant at `epoch` until `expiresAtMs` (database time, as `nowMs`). */
  | { held: true; epoch: number; expiresAtMs: number; nowMs: number }
  /** Another node holds it. */
  | { held: false; owner: string; expiresAtMs: number; nowMs: number }

interface LeaseRecord {
  tenant: string
  owner: string
  epoch: number
  expires_at: Date
}

function leaseOfRecord(record: LeaseRecord): LeaseRow {
  return { tenant: record.tenant, owner: record.owner, epoch: record.epoch, expiresAtMs: record.expires_at.getTime() }
}

export async function claimLease(sql: Sql, tenant: string, nodeId: string, leaseMs: number): Promise<ClaimResult> {
  const [claimed] = await sql<{ epoch: number; expires_at: Date; now: Date }[]>`
    INSERT INTO leases AS l (tenant, owner, epoch, expires_at)
    VALUES (${tenant}, ${nodeId}, 1, now() + ${leaseMs}::float8 * interval '1 millisecond')
    ON CONFLICT (tenant) DO UPDATE SET
      owner = EXCLUDED.owner,
      epoch = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() THEN l.epoch ELSE l.epoch + 1 END,
      expires_at = EXCLUDED.expires_at
    WHERE l.owner = EXCLUDED.owner OR l.expires_at <= now()
    RETURNING l.epoch, l.expires_at, now() AS now`
  if (claimed !== undefined) return { held: true, epoch: claimed.epoch, expiresAtMs: claimed.expires_at.getTime(), nowMs: claimed.now.getTime() }
  const [other] = await sql<{ owner: string; expires_at: Date; now: Date }[]>`SELECT owner, expires_at, now() AS now FROM leases WHERE tenant = ${tenant}`
  // The lease ran out between the two statements: claim again.
  if (other === undefined || other.expires_at.getTime() <= other.now.getTime()) return claimLease(sql, tenant, nodeId, leaseMs)
  return { held: false, owner: other.owner, expiresAtMs: other.expires_at.getTime(), nowMs: other.now.getTime() }
}

/** Extends the leases still this node's at the epoch given; answers those tenants and the database time. */
export async function renewLeases(sql: Sql, nodeId: string, held: readonly { tenant: string; epoch: number }[], leaseMs: number): Promise<{ tenants: string[]; expiresAtMs: number; nowMs: number }> {
  const [clock] = await sql<{ now: Date; expires_at: Date }[]>`SELECT now() AS now, now() + ${leaseMs}::float8 * interval '1 millisecond' AS expires_at`
  assert(clock !== undefined, 'a SELECT without FROM answers one row')
  const nowMs = clock.now.getTime()
  const expiresAtMs = clock.expires_at.getTime()
  if (held.length === 0) return { tenants: [], expiresAtMs, nowMs }
  const rows = await sql<{ tenant: string }[]>`
    UPDATE leases l SET expires_at = ${clock.expires_at}
    FROM unnest(${sql.array(held.map((h) => h.tenant))}::text[], ${sql.array(held.map((h) => String(h.epoch)))}::int8[]) AS h (tenant, epoch)
    WHERE l.tenant = h.tenant AND l.epoch = h.epoch AND l.owner = ${nodeId}
    RETURNING l.tenant`
  return { tenants: rows.map((row) => row.tenant), expiresAtMs, nowMs }
}

/** Lets the tenant go: its lease expires now, if it is still this node's at `epoch`; answers whether it was. */
export async function releaseLease(sql: Sql, tenant: string, nodeId: string, epoch: number): Promise<boolean> {
  const rows = await sql`UPDATE leases SET expires_at = now() WHERE tenant = ${tenant} AND owner = ${nodeId} AND epoch = ${String(epoch)} RETURNING tenant`
  return rows.length === 1
}

export async function leaseOf(sql: Sql, tenant: string): Promise<LeaseRow | undefined> {
  const [record] = await sql<LeaseRecord[]>`SELECT tenant, owner, epoch, expires_at FROM leases WHERE tenant = ${tenant}`
  return record === undefined ? undefined : leaseOfRecord(record)
}

/** Those of `tenants` whose lease is live now (by the database's clock). */
export async function liveLeased(sql: Sql, tenants: readonly string[]): Promise<string[]> {
  if (tenants.length === 0) return []
  const rows = await sql<{ tenant: string }[]>`SELECT tenant FROM leases WHERE tenant = ANY(${sql.array([...tenants])}::text[]) AND expires_at > now()`
  return rows.map((row) => row.tenant)
}

export async function allLeases(sql: Sql): Promise<LeaseRow[]> {
  const records = await sql<LeaseRecord[]>`SELECT tenant, owner, epoch, expires_at FROM leases ORDER BY tenant`
  return records.map(leaseOfRecord)
}
