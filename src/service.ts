/*
 * The running service: the data directory lock, the LMDB store, the tenant
 * registry, the API keys and the HTTP front end, started in that order and
 * stopped in reverse. A clean stop (SIGTERM/SIGINT) stops listening, lets
 * pending writes flush, snapshots every active tenant and closes LMDB.
 *
 * Mails still being delivered are waited for after the last write.
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
import { Readiness } from './admin/readiness.js'
import { acquireLock, releaseLock } from './persist/dataDirLock.js'
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
import { startHttpServer } from './http/server.js'
import { outboxFor } from './mail/outbox.js'
import { LogStore } from './persist/logStore.js'

export interface RunningService {
  readonly port: number
  /** Port of the admin listener on 127.0.0.1. */
  readonly adminPort: number
  /** Register operator routes here: `admin.route(method, pattern, handler)`. */
  readonly admin: AdminServer
  readonly readiness: Readiness
  readonly services: Services
  readonly observers: FrontEndObservers
  /** Runs one idle-eviction sweep now (tests); resolves with the tenants put to rest. */
  sweepIdle(): Promise<string[]>
  stop(): Promise<void>
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
 * RECOVER_ON_START: every tenant is activated before the service says ready (up to MAX_ACTIVE_TENANTS: more
 * would only be put to rest again); a damaged one stays closed (logged). Activations run a slice per event-loop
 * turn, so the admin listener answers (/readyz: starting) meanwhile.
 */
async function activateAll(registry: TenantRegistry): Promise<void> {
  const max = registry.config.maxActiveTenants
  for (const tenant of registry.names()) {
    if (max > 0 && registry.activeCount >= max) return
    try {
      await registry.open(tenant)
    } catch (error) {
      if (!(error instanceof TenantRefusal)) throw error
    }
  }
}

export async function startService(config: Config): Promise<RunningService> {
  acquireLock(config.dataDir)
  const store = LogStore.open(config.dataDir, config.lmdbMapSizeBytes)
  rebuildGlobalIndexesIfOld(store, config.quiet ? undefined : console.log)
  const registry = new TenantRegistry(config, store)
  const services: Services = { config, registry, apiKeys: apiKeysFor(config), limits: abuseLimits(config), outbox: outboxFor(config) }
  const readiness = new Readiness()
  const admin = new AdminServer(adminKeyFor(config))
  registerHealthRoutes(admin, readiness)
  const observers: FrontEndObservers = {
    requests: new RequestMetrics(),
    requestLog: config.requestLog ? new RequestLog() : null,
    requestIds: new RequestIds(),
  }
  registerMetricsRoute(admin, { requests: observers.requests, registry, store })
  registerRestoreRoute(admin, registry)
  let server: Awaited<ReturnType<typeof startHttpServer>>
  try {
    await admin.listen(config.adminPort)
    if (config.recoverOnStart) await activateAll(registry)
    server = await startHttpServer(services, config.port, config.host, observers)
  } catch (error) {
    // A port that is taken (or any start-up failure) leaves nothing held: the data directory can be served again.
    admin.close()
    await registry.close()
    await store.close()
    releaseLock(config.dataDir)
    throw error
  }
  const sweeper = startIdleSweeper(registry, config.idleEvictMs)
  readiness.markReady()
  let stopping: Promise<void> | null = null
  return {
    port: server.port,
    adminPort: admin.port,
    admin,
    readiness,
    services,
    observers,
    sweepIdle: () => sweeper.sweep(),
    stop: () =>
      (stopping ??= (async () => {
        readiness.markStopping()
        sweeper.stop()
        server.close()
        await registry.close()
        await services.outbox.close()
        await store.close()
        observers.requestLog?.flush()
        admin.close()
        releaseLock(config.dataDir)
      })()),
  }
}
