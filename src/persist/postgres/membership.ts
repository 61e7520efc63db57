/*
 * The membership table (ARCHITECTURE.md §8): each node registers itself at start
 * (its id and the internal address other nodes forward to) and beats its
 * heartbeat while it runs; the `cluster` command and the forwarding read
 * them. Times are the database's (now()), as for leases.
 */
import type { Sql } from './connection.js'

export interface NodeRow {
  id: string
  internalUrl: string
  startedAtMs: number
  heartbeatAtMs: number
}

export async function registerNode(sql: Sql, id: string, internalUrl: string): Promise<void> {
  await sql`
    INSERT INTO nodes (id, internal_url, started_at, heartbeat_at) VALUES (${id}, ${internalUrl}, now(), now())
    ON CONFLICT (id) DO UPDATE SET internal_url = EXCLUDED.internal_url, started_at = now(), heartbeat_at = now()`
}

/** Answers false when the node is not registered. */
export async function heartbeat(sql: Sql, id: string): Promise<boolean> {
  const rows = await sql`UPDATE nodes SET heartbeat_at = now() WHERE id = ${id} RETURNING id`
  return rows.length === 1
}

export async function allNodes(sql: Sql): Promise<NodeRow[]> {
  const rows = await sql<{ id: string; internal_url: string; started_at: Date; heartbeat_at: Date }[]>`
    SELECT id, internal_url, started_at, heartbeat_at FROM nodes ORDER BY id`
  return rows.map((row) => ({ id: row.id, internalUrl: row.internal_url, startedAtMs: row.started_at.getTime(), heartbeatAtMs: row.heartbeat_at.getTime() }))
}
