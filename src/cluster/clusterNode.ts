/*
 * A cluster node's own parts (ARCHITECTURE.md §8), started by service.ts when
 * DATABASE_URL is set: the PostgreSQL storage (persist/postgres/), the
 * membership row and its heartbeat, the lease keeper with its renewals,
 * the placement the registry asks, the forwarder, and the internal
 * listener the other nodes forward to (forwarded requests, and the cluster's
 * own calls: clusterCalls.ts). Everything else (engine, domain,
 * HTTP routes, the registry) is the code the embedded default runs.
 *
 * Start: storage (migrations run there), then the internal listener (its
 * port is what the nodes table advertises), then the membership row and the
 * renewals. Stop, after the registry has snapshotted its tenants and given
 * their leases back: the renewals and heartbeat end, the internal listener
 * closes, the storage closes.
 */
import crypto from 'node:crypto'
import type { ClusterConfig, Config } from '../config.js'
import type { Services } from '../http/call.js'
import type { RunningServer } from '../http/listener.js'
import type { FrontEndObservers } from '../observability/frontEndObservers.js'
import { openPgStorage } from '../persist/postgres/index.js'
import type { ClusterStore } from './clusterStore.js'
import { ClusterPlacement } from './clusterPlacement.js'
import { HttpForwarder } from './httpForwarder.js'
import { startInternalListener } from './internalListener.js'
import { LeaseKeeper } from './leaseKeeper.js'
import { Membership } from './membership.js'
import { clusterCalls } from './clusterCalls.js'
import type { HistoryFetch, OnlineRestores } from '../tenants/onlineRestore.js'

export interface ClusterNode {
  readonly config: ClusterConfig
  /** This process's id in the nodes and leases tables: NODE_ID and a part new at every start. */
  readonly nodeId: string
  readonly store: ClusterStore
  readonly keeper: LeaseKeeper
  readonly placement: ClusterPlacement
  readonly forwarder: HttpForwarder
  readonly membership: Membership
  /** What an online restore fetches of a held tenant's history (tenants/onlineRestore.ts). */
  readonly historyFetch: HistoryFetch
  internalPort: number
  /** Starts the internal listener and joins the membership table; the services are the public listener's. */
  listen(services: Services, observers: FrontEndObservers, restores: OnlineRestores): Promise<void>
  /** Stops renewing, closes the internal listener (the registry has closed already). */
  stopServing(): void
  closeStore(): Promise<void>
}

/**
 * The id this process holds leases under: NODE_ID and a part new at every start. A node restarted under its old
 * NODE_ID is a new incarnation whose claims move the epoch, and two processes started with one NODE_ID by mistake
 * still fence each other.
 */
function incarnationId(nodeId: string): string {
  return `${nodeId}.${crypto.randomBytes(4).toString('hex')}`
}

export async function openClusterNode(config: Config, cluster: ClusterConfig): Promise<ClusterNode> {
  const nodeId = incarnationId(cluster.nodeId)
  // A transaction left open by a paused node ends before its lease would, so a takeover never waits past the lease.
  const store: ClusterStore = await openPgStorage(cluster.databaseUrl, { nodeId, idleInTransactionMs: Math.max(200, Math.floor(cluster.leaseMs / 2)) })
  const keeper = new LeaseKeeper(store, nodeId, cluster.leaseMs)
  const membership = new Membership(store, nodeId, Math.max(50, Math.floor(cluster.leaseMs / 3)))
  const placement = new ClusterPlacement(store, keeper, membership)
  const forwarder = new HttpForwarder(cluster.secret, config.changeFeedMaxBufferedBytes)
  let internal: RunningServer | null = null
  const node: ClusterNode = {
    config: cluster,
    nodeId,
    store,
    keeper,
    placement,
    forwarder,
    membership,
    // Every good snapshot and the whole log, as the CLI's restore reads them (clusterTools.ts).
    historyFetch: { fetch: (tenant) => store.prepare(tenant, { wholeLog: true, everySnapshot: true }), drop: (tenant) => store.forget(tenant) },
    internalPort: 0,
    async listen(services, observers, restores) {
      const clusterCall = clusterCalls(services, placement, restores)
      internal = await startInternalListener(services, cluster.internalPort, cluster.internalHost, observers, { secret: cluster.secret, clusterCall })
      node.internalPort = internal.port
      const url = cluster.internalUrl ?? `http://${cluster.internalHost}:${internal.port}`
      await membership.join(url)
      keeper.start()
      if (!config.quiet) console.log(`Cluster node '${nodeId}': internal listener on ${url}, lease ${cluster.leaseMs} ms`)
    },
    stopServing() {
      keeper.stop()
      membership.leave()
      internal?.close()
      forwarder.close()
    },
    closeStore: () => store.close(),
  }
  return node
}
