/*
 * The running service: the data directory lock, the LMDB store, the tenant
 * registry, the API keys and the HTTP front end, started in that order and
 * stopped in reverse. A clean stop (SIGTERM/SIGINT) stops listening, lets
 * pending writes flush, snapshots every active tenant written to since its
 * last snapshot (tenants/snapshotEvery.ts) and closes LMDB.
 *
 * With DATABASE_URL the storage is PostgreSQL's instead and this process is
 * a node of a cluster (cluster/clusterNode.ts, ARCHITECTURE.md §8): no lock or LMDB,
 * a placement that tells the registry which tenants are this node's, a
 * forwarder for the others', and an internal listener started before the
 * public one; a clean stop gives every lease back after the snapshots.
 *
 * Mails still being delivered are waited for after the last write.
 * Webhook deliveries (webhooks/) hear of every tenant the registry
 * activates; once ready, the tenants with active webhooks are woken, so
 * their deliveries go on after a restart without a request (in cluster
 * mode those no node holds, at start and every lease period after: a node
 * that died leaves its tenants to the others); a stop ends the
 * deliveries before the tenants are snapshotted (what was in flight is sent
 * again after the next start).
 *
 * The admin listener (src/admin/, loopback only) starts before the public
 * one, so /healthz answers and /readyz says 'starting' while start-up work
 * runs (RECOVER_ON_START activates every tenant first, yielding between
 * tenants so those answers get out); it closes last, so /readyz says
 * 'stopping' while a stop drains.
 *
 * Both listeners have their port to themselves (http/uws.ts for the API's,
 * Node's exclusive listen for the admin's): a second
 * service started on a taken PORT or ADMIN_PORT fails to start with a
 * message naming the port, and gives back its data directory lock and
 * LMDB store, instead of quietly sharing the port's connections.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type { Config } from './config.js'
import { adminKeyFor } from './admin/adminKey.js'
import { AdminServer } from './admin/adminServer.js'
import { registerHealthRoutes } from './admin/healthRoutes.js'
import { registerMetricsRoute } from './admin/metricsRoute.js'
import { registerRestoreRoute } from './admin/restoreRoute.js'
import { registerStatusRoute } from './admin/statusRoute.js'
import { OnlineRestores } from './tenants/onlineRestore.js'
import { Readiness } from './admin/readiness.js'
import { acquireLock, recordListeners, releaseLock } from './persist/dataDirLock.js'
import { rebuildGlobalIndexesIfOld } from './tenants/globalIndexes.js'
import { startIdleSweeper } from './tenants/idleSweeper.js'
import type { FrontEndObservers } from './observability/frontEndObservers.js'
import { RequestIds } from './observability/requestId.js'
import { RequestLog } from './observability/requestLog.js'
import { RequestMetrics } from './observability/requestMetrics.js'
import { TenantRegistry } from './tenants/tenantRegistry.js'
import { TenantRefusal } from './tenants/tenantErrors.js'
import type { Services } from './http/call.js'
import { abuseLimits } from './http/abuseLimits.js'
import { FeedLimits } from './http/changes/feedLimits.js'
import { startHttpServer } from './http/server.js'
import { outboxFor } from './mail/outbox.js'
import { EmbeddedStorage } from './persist/embeddedStorage.js'
import type { Storage } from './persist/ports.js'
import { progress, type ProgressFactory } from './progress.js'
import { openClusterNode, type ClusterNode } from './cluster/clusterNode.js'
import { WebhookDeliverer } from './webhooks/webhookDeliverer.js'

export interface RunningService {
  readonly port: number
  /** Port of the admin listener on 127.0.0.1. */
  readonly adminPort: number
  /** Cluster mode: port of the internal listener the other nodes forward to; null embedded. */
  readonly internalPort: number | null
  /** Register operator routes here: `admin.route(method, pattern, handler)`. */
  readonly admin: AdminServer
  readonly readiness: Readiness
  readonly services: Services
  readonly observers: FrontEndObservers
  /** Runs one idle-eviction sweep now (tests); resolves with the tenants put to rest. */
  sweepIdle(): Promise<string[]>
  /** The clean stop; `progress` hears the snapshots it writes (the CLI's serve shows them on stderr). */
  stop(options?: { progress?: ProgressFactory }): Promise<void>
}

/** The configured API keys, or the one kept in DATA_DIR (made and printed on first start). */
function apiKeysFor(config: Config): Set<string> {
  if (config.apiKeys.length > 0) return new Set(config.apiKeys)
  const file = path.join(config.dataDir, 'api-key')
  if (!fs.existsSync(file)) {
    const key = crypto.randomBytes(24).toString('base64url')
    fs.writeFileSync(file, `${key}\n`, { mode: 0o600 })
    console.log(`Generated API key (kept in ${file}): ${key}`)
  }
  return new Set([fs.readFileSync(file, 'utf8').trim()])
}

/**
 * RECOVER_ON_START (embedded only): every tenant is activated before the service says ready (up to MAX_ACTIVE_TENANTS: more
 * would only be put to rest again); a damaged one stays closed (logged). Activations run a slice per event-loop
 * turn, so the admin listener answers (/readyz: starting) meanwhile.
 */
async function activateAll(registry: TenantRegistry): Promise<void> {
  // Cluster mode: tenants settle where HAProxy sends their requests; a node that claimed them all would hold them all.
  if (!registry.placement.keepsTenants) return
  const max = registry.config.maxActiveTenants
  const names = registry.names()
  const total = max > 0 ? Math.min(max, names.length) : names.length
  // Loading every tenant can take minutes: the operator sees it go (stderr), as with every long operator step.
  const shown = registry.config.quiet ? null : progress('activate tenants (RECOVER_ON_START)', 'tenants', total)
  for (const [done, tenant] of names.entries()) {
    if (max > 0 && registry.activeCount >= max) break
    shown?.update(done)
    try {
      await registry.open(tenant)
    } catch (error) {
      if (!(error instanceof TenantRefusal)) throw error
    }
  }
  shown?.update(total)
  shown?.finish()
}

/** The storage of this process and what goes with it: the embedded LMDB store, or a cluster node (ARCHITECTURE.md §8). */
interface Backend {
  readonly store: Storage
  readonly node: ClusterNode | null
  close(): Promise<void>
}

async function openBackend(config: Config): Promise<Backend> {
  if (config.cluster !== null) {
    if (config.apiKeys.length === 0) throw new Error('cluster mode needs API_KEYS: the same keys on every node')
    const node = await openClusterNode(config, config.cluster)
    return { store: node.store, node, close: () => node.closeStore() }
  }
  acquireLock(config.dataDir)
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  return {
    store,
    node: null,
    close: async () => {
      await store.close()
      releaseLock(config.dataDir)
    },
  }
}

export async function startService(config: Config): Promise<RunningService> {
  const { store, node, close: closeBackend } = await openBackend(config)
  rebuildGlobalIndexesIfOld(store, config.quiet ? undefined : console.log)
  const registry = new TenantRegistry(config, store, node?.placement)
  // Before any tenant is activated: it hears of every one (webhooks/webhookDeliverer.ts).
  const webhooks = new WebhookDeliverer(registry, config)
  const services: Services = {
    config,
    registry,
    apiKeys: apiKeysFor(config),
    limits: abuseLimits(config),
    feedLimits: new FeedLimits(config),
    outbox: outboxFor(config),
    forwarder: node?.forwarder ?? null,
  }
  const readiness = new Readiness()
  const admin = new AdminServer(adminKeyFor(config))
  registerHealthRoutes(admin, readiness)
  const observers: FrontEndObservers = {
    requests: new RequestMetrics(),
    requestLog: config.requestLog ? new RequestLog() : null,
    requestIds: new RequestIds(),
  }
  registerMetricsRoute(admin, { requests: observers.requests, registry, store, cluster: node, webhooks, feeds: services.feedLimits })
  const restores = new OnlineRestores(registry, node?.historyFetch ?? null)
  registerRestoreRoute(admin, restores)
  let server: Awaited<ReturnType<typeof startHttpServer>> | null = null
  registerStatusRoute(admin, {
    config,
    readiness,
    registry,
    store,
    nodeId: node?.nodeId ?? null,
    ports: () => ({ public: server?.port ?? null, admin: admin.port === 0 ? null : admin.port, internal: node?.internalPort ?? null }),
  })
  try {
    await admin.listen(config.adminPort)
    // The operator commands find this server's listeners in its lock (embedded; a cluster node holds none).
    if (node === null) recordListeners(config.dataDir, { adminPort: admin.port })
    // A cluster node joins (and may be forwarded to) before it serves: its internal listener comes first.
    await node?.listen(services, observers, restores)
    if (config.recoverOnStart) await activateAll(registry)
    server = await startHttpServer(services, config.port, config.host, observers, { readiness })
  } catch (error) {
    // A port that is taken (or any start-up failure) leaves nothing held: the data directory can be served again.
    admin.close()
    webhooks.close()
    await registry.close()
    node?.stopServing()
    await closeBackend()
    throw error
  }
  if (node === null) recordListeners(config.dataDir, { host: config.host, port: server.port })
  const sweeper = startIdleSweeper(registry, config.idleEvictMs)
  readiness.markReady()
  // Deliveries that were under way at the last stop go on without waiting for a request.
  if (node === null) webhooks.wakeMarked().catch((error: unknown) => console.error('waking the tenants with webhooks failed:', error))
  else
    webhooks.keepWaking(node.config.leaseMs, async (tenants) => {
      const held = new Set(await node.store.liveLeased(tenants))
      return tenants.filter((tenant) => !held.has(tenant))
    })
  let stopping: Promise<void> | null = null
  return {
    port: server.port,
    adminPort: admin.port,
    internalPort: node?.internalPort ?? null,
    admin,
    readiness,
    services,
    observers,
    sweepIdle: () => sweeper.sweep(),
    stop: (options = {}) =>
      (stopping ??= (async () => {
        readiness.markStopping()
        sweeper.stop()
        server.close()
        webhooks.close()
        // Snapshots every tenant and, in cluster mode, gives their leases back: other nodes take them at once.
        await registry.close(options.progress)
        node?.stopServing()
        await services.outbox.close()
        await closeBackend()
        observers.requestLog?.flush()
        admin.close()
      })()),
  }
}
