/*
 * The operator commands in cluster mode (cli.ts): the same commands as on a
 * data directory, run against the PostgreSQL store.
 *
 * Reading commands (tenants, history, export) prepare each tenant with its
 * whole retained log (ClusterStore.prepare) and then read it as the
 * embedded tools do; they need no lease, since they change nothing.
 *
 * A restore to a point of the history runs online in the node holding the
 * tenant (restoreCall.ts): the CLI asks that node, or the node heard from
 * last when no node holds the tenant.
 *
 * Commands that change a tenant otherwise (a restore from a snapshot file,
 * import) must be its only writer,
 * like a node: the operator process claims the tenant's lease under an id
 * of its own and renews it while it works (leaseKeeper.ts), so its snapshot
 * is fenced like any node's append. A tenant a node holds is first handed
 * back by that node (its internal listener's release call: the node
 * snapshots it and gives the lease back); requests for the tenant meanwhile
 * find the operator's lease, which no node can forward to, and are
 * answered 503 with Retry-After until the operator gives the lease back
 * and a node activates the tenant again from what the operator wrote. The
 * writer's prepare loads the whole log and every good snapshot, as the
 * embedded tools find them on disk, so a restore to any point the history
 * lists finds its base snapshot.
 */
import os from 'node:os'
import type { ClusterConfig } from '../config.js'
import { openPgStorage } from '../persist/postgres/index.js'
import type { ClusterStore, LeaseRow, NodeRow } from './clusterStore.js'
import { LeaseKeeper } from './leaseKeeper.js'
import { releaseOnNode } from './releaseCall.js'
import { restoreThroughNode, type RestorePoint } from './restoreCall.js'
import type { RestoreAnswer } from '../tenants/onlineRestore.js'

export async function withClusterStore<T>(cluster: ClusterConfig, job: (store: ClusterStore) => Promise<T>): Promise<T> {
  const store: ClusterStore = await openPgStorage(cluster.databaseUrl, { nodeId: operatorId() })
  try {
    return await job(store)
  } finally {
    await store.close()
  }
}

function operatorId(): string {
  return `operator-${os.hostname()}-${process.pid}`
}

/** How long the operator waits for a node to hand a tenant back. */
const HAND_BACK_TIMEOUT_MS = 30_000

/**
 * Runs `job` as the tenant's only writer (see the top): `create` for a tenant that must not exist yet (import).
 * The lease is given back when the job ends, whatever its outcome.
 */
export async function asTenantWriter<T>(store: ClusterStore, cluster: ClusterConfig, tenant: string, create: boolean, job: () => Promise<T>): Promise<T> {
  const nodeId = operatorId()
  const keeper = new LeaseKeeper(store, nodeId, cluster.leaseMs)
  const deadlineMs = Date.now() + HAND_BACK_TIMEOUT_MS
  for (;;) {
    const sentAtMs = performance.now()
    const claimed = await store.claim(tenant, cluster.leaseMs)
    if (claimed.held) {
      keeper.add(tenant, claimed.epoch, sentAtMs)
      store.hold(tenant, claimed.epoch)
      break
    }
    if (create) throw new Error(`tenant '${tenant}' is held by ${claimed.owner}: it exists`)
    if (Date.now() > deadlineMs) throw new Error(`tenant '${tenant}' is still held by ${claimed.owner} after ${HAND_BACK_TIMEOUT_MS} ms`)
    const owner = (await store.nodes()).find((node) => node.id === claimed.owner)
    if (owner !== undefined) await releaseOnNode(owner.internalUrl, cluster.secret, tenant)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  keeper.start()
  try {
    // Every good snapshot: a restore to a point in time rebuilds from the newest one at or before it.
    await store.prepare(tenant, { wholeLog: true, everySnapshot: true })
    return await job()
  } finally {
    keeper.stop()
    store.forget(tenant)
    store.unhold(tenant)
    const epoch = keeper.remove(tenant)
    if (epoch !== undefined) await store.release(tenant, epoch)
  }
}

/** Restores the tenant to a point of its history through the node holding it (or the node heard from last). */
export async function restoreOnline(store: ClusterStore, cluster: ClusterConfig, tenant: string, point: RestorePoint): Promise<RestoreAnswer> {
  const nodes = await store.nodes()
  const lease = await store.leaseOf(tenant)
  const owner = nodes.find((node) => node.id === lease?.owner)
  const freshest = [...nodes].sort((a, b) => b.heartbeatAtMs - a.heartbeatAtMs)[0]
  const node = owner ?? freshest
  if (node === undefined) throw new Error('no node has joined the cluster: start one, or restore from a snapshot file with --from')
  return restoreThroughNode(node.internalUrl, cluster.secret, tenant, point)
}

/** What `timeledger cluster` prints: the nodes, the leases, and the tenants nobody holds. */
export function clusterReport(nodes: readonly NodeRow[], leases: readonly LeaseRow[], tenants: readonly string[], nowMs: number, leaseMs: number): string {
  const lines: string[] = []
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
  lines.push(`nodes (${nodes.length}):`)
  for (const node of nodes) {
    const silentMs = nowMs - node.heartbeatAtMs
    const state = silentMs <= leaseMs ? 'alive' : `silent for ${seconds(silentMs)}`
    const held = leases.filter((lease) => lease.owner === node.id && lease.expiresAtMs > nowMs).length
    lines.push(`  ${node.id}  ${node.internalUrl}  ${state}  ${held} leases`)
  }
  lines.push(`tenants (${tenants.length}):`)
  const byTenant = new Map(leases.map((lease) => [lease.tenant, lease]))
  for (const tenant of tenants) {
    const lease = byTenant.get(tenant)
    if (lease === undefined) lines.push(`  ${tenant}  never served`)
    else if (lease.expiresAtMs > nowMs) lines.push(`  ${tenant}  on ${lease.owner} (epoch ${lease.epoch}, lease for ${seconds(lease.expiresAtMs - nowMs)})`)
    else lines.push(`  ${tenant}  at rest (last on ${lease.owner}, epoch ${lease.epoch})`)
  }
  return lines.join('\n')
}
