/*
 * GET /status on the admin listener (admin key): what `timeledger status`
 * prints, as one JSON object, read at the moment of the request:
 *
 *   {pid, startedAt, uptimeS, phase, node, dataDir, host, baseDomain,
 *    ports: {public, admin, internal}, tenants: {known, inMemory, closed},
 *    memory: {residentBytes, heapUsedBytes, heapTotalBytes},
 *    log: {entries, storeBytes, storeLimitBytes}}
 *
 * `phase` is /readyz's (starting, ready, stopping). `node` is the cluster
 * node's id (null embedded). `storeBytes` is what the LMDB environment
 * holds (pages in use, persist/storeSpace.ts) and `storeLimitBytes` its
 * ceiling, LMDB_MAP_SIZE_BYTES; both null in cluster mode, where the log is
 * in PostgreSQL. The figures are the ones /metrics gives (the same
 * sources), gathered for a person rather than a scraper.
 */
import type { Config } from '../config.js'
import type { Storage } from '../persist/ports.js'
import type { TenantRegistry } from '../tenants/tenantRegistry.js'
import { jsonAnswer, type AdminServer } from './adminServer.js'
import type { Readiness } from './readiness.js'

export interface StatusSources {
  readonly config: Config
  readonly readiness: Readiness
  readonly registry: TenantRegistry
  readonly store: Storage
  /** Cluster mode: this node's id; null embedded. */
  readonly nodeId: string | null
  /** The listeners' ports once they listen (null before). */
  ports(): { public: number | null; admin: number | null; internal: number | null }
}

export interface ServerStatus {
  pid: number
  startedAt: number
  uptimeS: number
  phase: string
  node: string | null
  dataDir: string
  host: string
  baseDomain: string
  ports: { public: number | null; admin: number | null; internal: number | null }
  tenants: { known: number; inMemory: number; closed: number }
  memory: { residentBytes: number; heapUsedBytes: number; heapTotalBytes: number }
  log: { entries: number; storeBytes: number | null; storeLimitBytes: number | null }
}

function serverStatus(sources: StatusSources): ServerStatus {
  const { config, registry, store } = sources
  const memory = process.memoryUsage()
  const uptimeS = process.uptime()
  const embedded = config.cluster === null
  return {
    pid: process.pid,
    startedAt: Math.round(Date.now() - uptimeS * 1000),
    uptimeS: Math.round(uptimeS),
    phase: sources.readiness.phase,
    node: sources.nodeId,
    dataDir: config.dataDir,
    host: config.host,
    baseDomain: config.baseDomain,
    ports: sources.ports(),
    tenants: { known: registry.names().length, inMemory: registry.activeCount, closed: registry.closed.all.size },
    memory: { residentBytes: memory.rss, heapUsedBytes: memory.heapUsed, heapTotalBytes: memory.heapTotal },
    log: { entries: store.logEntryCount(), storeBytes: embedded ? store.space.measure() : null, storeLimitBytes: embedded ? store.space.limitBytes : null },
  }
}

export function registerStatusRoute(admin: AdminServer, sources: StatusSources): void {
  admin.route('GET', '/status', () => jsonAnswer(200, serverStatus(sources)))
}
