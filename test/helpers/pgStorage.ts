/*
 * Fixtures of the PostgreSQL storage tests: a PgStorage as one node on a
 * database, a tenant claimed and held by it (as the cluster layer does
 * before a tenant's first write), two nodes on one database, and log
 * entries that put a time record.
 */
import { buildRecord } from '../../src/domain/recordMaking.js'
import { TimeRecord } from '../../src/domain/resources/timeRecord.js'
import { LOG_ENTRY_FORMAT, type LogEntry } from '../../src/engine/logEntry.js'
import { openPgStorage, type PgStorage } from '../../src/persist/postgres/index.js'
import type { Test } from 'tap'
import type { PostgresServer } from './postgresServer.js'

const LEASE_MS = 30_000

export function openNode(url: string, nodeId: string): Promise<PgStorage> {
  return openPgStorage(url, { nodeId })
}

/** Claims the tenant for the node and holds it at the epoch won; answers the epoch. */
export async function holdTenant(storage: PgStorage, tenant: string, leaseMs = LEASE_MS): Promise<number> {
  const claim = await storage.claim(tenant, leaseMs)
  if (!claim.held) throw new Error(`${storage.nodeId} could not claim ${tenant}: ${claim.owner} holds it`)
  storage.hold(tenant, claim.epoch)
  await storage.prepare(tenant)
  return claim.epoch
}

/** A log entry putting one time record described `description`, decided at `at`. */
export function timeRecordEntry(description: string, at = 1_700_000_000_000): LogEntry {
  const rec = buildRecord(TimeRecord, { start: at, stop: at + 3_600_000, description }, at)
  return { v: LOG_ENTRY_FORMAT, at, ops: [{ op: 'put', type: 'TimeRecord', rec }] }
}

/** Two nodes, 'a' and 'b', on a fresh database of `pg`, closed at the end of the test. */
export async function twoNodes(t: Test, pg: PostgresServer): Promise<{ a: PgStorage; b: PgStorage; url: string }> {
  const url = await pg.freshDatabase()
  const a = await openNode(url, 'a')
  const b = await openNode(url, 'b')
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  return { a, b, url }
}
