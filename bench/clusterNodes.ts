/*
 * TimeLedger cluster nodes for the cluster benchmark (bench/cluster.ts):
 * each node is the real server as a child process (serverProcess.ts:
 * startServer, the same one the embedded figures run) with the cluster
 * settings added — DATABASE_URL, CLUSTER_SECRET, NODE_ID, INTERNAL_PORT=0
 * — automatic snapshots off as in every benchmark, and an admin listener
 * on a port of its own so /metrics can be read. A node is killed with
 * SIGKILL through its pid (failover) or stopped with SIGTERM.
 *
 * Which node holds a tenant is read from the leases table: the owner is
 * the node's incarnation, `NODE_ID.<hex>` (clusterNode.ts; nodeOfOwner in
 * test/helpers/cluster.ts maps it to a node).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import { freePort } from './loadgen.js'
import { NO_AUTO_SNAPSHOTS, startServer, type BenchServer } from './serverProcess.js'

export const BENCH_CLUSTER_SECRET = 'bench-cluster-secret-0123456789'
export const BENCH_ADMIN_KEY = 'bench-cluster-admin-key'

export interface ClusterNodeProcess {
  readonly nodeId: string
  readonly server: BenchServer
  readonly adminPort: number
  readonly dataDir: string
  /** GET /metrics on the admin listener. */
  metrics(): Promise<string>
  kill(): void
  stop(): Promise<void>
}

/** GET /metrics on an admin listener started with BENCH_ADMIN_KEY. */
export function metricsReader(adminPort: number): () => Promise<string> {
  return async () => (await fetch(`http://127.0.0.1:${adminPort}/metrics`, { headers: { authorization: `Bearer ${BENCH_ADMIN_KEY}` } })).text()
}

/** The environment a node of the benchmark cluster and the cluster CLI commands run with. */
export function clusterSettings(databaseUrl: string, nodeId: string, leaseMs: number | null): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    CLUSTER_SECRET: BENCH_CLUSTER_SECRET,
    NODE_ID: nodeId,
    INTERNAL_PORT: '0',
    ...(leaseMs === null ? {} : { LEASE_MS: String(leaseMs) }),
  }
}

/** Starts node `nodeId` on `databaseUrl`, on a free port; LEASE_MS is the default unless `leaseMs` is given. */
export async function startClusterNode(databaseUrl: string, nodeId: string, options: { leaseMs?: number } = {}): Promise<ClusterNodeProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `timeledger-bench-${nodeId}-`))
  const adminPort = await freePort()
  const env = { ...NO_AUTO_SNAPSHOTS, ...clusterSettings(databaseUrl, nodeId, options.leaseMs ?? null), ADMIN_PORT: String(adminPort), ADMIN_KEY: BENCH_ADMIN_KEY }
  const server = await startServer({ dataDir, env })
  return {
    nodeId,
    server,
    adminPort,
    dataDir,
    metrics: metricsReader(adminPort),
    kill: () => {
      try {
        process.kill(server.pid, 'SIGKILL')
      } catch {
        // already gone
      }
    },
    stop: async () => {
      await server.stop(10_000)
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** The lease of `tenant` (owner incarnation and expiry), or null when nobody ever held it. */
export async function leaseOf(databaseUrl: string, tenant: string): Promise<{ owner: string; expiresAtMs: number; epoch: number } | null> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined })
  try {
    const rows = await sql<{ owner: string; expires_at: Date; epoch: string }[]>`SELECT owner, expires_at, epoch FROM leases WHERE tenant = ${tenant}`
    const row = rows[0]
    return row === undefined ? null : { owner: row.owner, expiresAtMs: row.expires_at.getTime(), epoch: Number(row.epoch) }
  } finally {
    await sql.end()
  }
}

/** How often watchTakeover reads the lease row. */
const TAKEOVER_POLL_MS = 25

/** Resolves with the time (Date.now()) at which a read first found `tenant`'s lease held by someone other than `oldOwner`; null past `deadlineMs`. */
export async function watchTakeover(databaseUrl: string, tenant: string, oldOwner: string, deadlineMs: number): Promise<number | null> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined })
  try {
    while (Date.now() < deadlineMs) {
      const rows = await sql<{ owner: string }[]>`SELECT owner FROM leases WHERE tenant = ${tenant}`
      if (rows[0] !== undefined && rows[0].owner !== oldOwner) return Date.now()
      await new Promise((resolve) => setTimeout(resolve, TAKEOVER_POLL_MS))
    }
    return null
  } finally {
    await sql.end()
  }
}
