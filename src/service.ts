/*
 * The running service: the data directory lock, the LMDB store, the tenant
 * registry, the API keys and the HTTP front end, started in that order and
 * stopped in reverse. A clean stop (SIGTERM/SIGINT) stops listening, lets
 * pending writes flush, snapshots every active tenant and closes LMDB.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type { Config } from './config.js'
import { acquireLock, releaseLock } from './dataDirLock.js'
import { TenantRegistry } from './engine/tenantRegistry.js'
import type { Services } from './http/call.js'
import { abuseLimits } from './http/rateLimiter.js'
import { startHttpServer } from './http/server.js'
import { LogStore } from './persist/logStore.js'

export interface RunningService {
  readonly port: number
  readonly services: Services
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

export async function startService(config: Config): Promise<RunningService> {
  acquireLock(config.dataDir)
  const store = LogStore.open(config.dataDir, config.lmdbMapSizeBytes)
  const registry = new TenantRegistry(config, store)
  const services: Services = { config, registry, apiKeys: apiKeysFor(config), limits: abuseLimits(config) }
  const server = await startHttpServer(services, config.port, config.host)
  let stopping: Promise<void> | null = null
  return {
    port: server.port,
    services,
    stop: () =>
      (stopping ??= (async () => {
        server.close()
        await registry.close()
        await store.close()
        releaseLock(config.dataDir)
      })()),
  }
}
