/*
 * Configuration read from the environment, once, with a default for every
 * setting (design §4). Numbers carry their unit in the name. Nothing else in
 * the service reads process.env: the config object is passed down.
 */
import path from 'node:path'

export interface Config {
  readonly port: number
  readonly host: string
  readonly dataDir: string
  readonly baseDomain: string
  /** API keys accepted for login, refresh and public calls; empty: one is generated on first start. */
  readonly apiKeys: readonly string[]
  readonly maxBodyBytes: number
  readonly tokenLifetimeMs: number
  readonly refreshedTokenLifetimeMs: number
  readonly refreshTokenLifetimeMs: number
  readonly snapshotEveryCommands: number
  readonly snapshotEveryLogBytes: number
  readonly snapshotsKept: number
  readonly logRetentionMs: number
  readonly lmdbMapSizeBytes: number
  readonly maxFileBytes: number
  readonly rateLimitRequests: number
  readonly rateLimitWindowMs: number
  /** Failed logins allowed per login name and per client address in a window; then refused for a window (0: off). */
  readonly loginFailuresAllowed: number
  readonly loginFailureWindowMs: number
  /** How long a password-change confirmation works. */
  readonly passwordConfirmationLifetimeMs: number
  readonly scryptCost: number
  readonly quiet: boolean
  /** Port of the admin listener (always on 127.0.0.1; 0: any free port). */
  readonly adminPort: number
  /** Bearer key of the admin listener; null: the one kept in DATA_DIR/admin-key (made on first start). */
  readonly adminKey: string | null
  /** One JSON line per request on stdout (off with REQUEST_LOG=0 or QUIET=1). */
  readonly requestLog: boolean
  /** Activate every tenant before reporting ready. */
  readonly recoverOnStart: boolean
  /** Tenants idle this long are snapshotted and dropped from memory (0: never). */
  readonly idleEvictMs: number
  /** Most tenants held in memory at once; past it the least recently used is evicted (0: no cap). */
  readonly maxActiveTenants: number
  /** Longest slice of a long read (scan, sort, summary, report) before it yields to the event loop (engine/slicedRead.ts). */
  readonly readSliceMs: number
  /** CPU ms per second a tenant's heavy reads may take; past it they get 429 (engine/heavyReadBudget.ts; 0: no budget). */
  readonly tenantHeavyReadMsPerS: number
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name]
  if (text === undefined || text === '') return fallback
  const value = Number(text)
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got '${text}'`)
  return value
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const MINUTE_MS = 60_000
  const DAY_MS = 24 * 60 * MINUTE_MS
  return {
    port: integer(env, 'PORT', 8080),
    host: env.HOST || '127.0.0.1',
    dataDir: path.resolve(env.DATA_DIR || './data'),
    baseDomain: (env.BASE_DOMAIN || 'localhost').toLowerCase(),
    apiKeys: (env.API_KEYS ?? '').split(',').map((key) => key.trim()).filter((key) => key !== ''),
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 1024 * 1024),
    tokenLifetimeMs: integer(env, 'TOKEN_LIFETIME_MS', 60 * MINUTE_MS),
    refreshedTokenLifetimeMs: integer(env, 'REFRESHED_TOKEN_LIFETIME_MS', 7 * DAY_MS),
    refreshTokenLifetimeMs: integer(env, 'REFRESH_TOKEN_LIFETIME_MS', 30 * DAY_MS),
    snapshotEveryCommands: integer(env, 'SNAPSHOT_EVERY_COMMANDS', 50_000),
    snapshotEveryLogBytes: integer(env, 'SNAPSHOT_EVERY_LOG_BYTES', 64 * 1024 * 1024),
    snapshotsKept: Math.max(1, integer(env, 'SNAPSHOTS_KEPT', 3)),
    logRetentionMs: integer(env, 'LOG_RETENTION_MS', 7 * DAY_MS),
    lmdbMapSizeBytes: integer(env, 'LMDB_MAP_SIZE_BYTES', 16 * 1024 * 1024 * 1024),
    maxFileBytes: integer(env, 'MAX_FILE_BYTES', 5 * 1024 * 1024),
    rateLimitRequests: integer(env, 'RATE_LIMIT_REQUESTS', 500),
    rateLimitWindowMs: integer(env, 'RATE_LIMIT_WINDOW_MS', 10_000),
    loginFailuresAllowed: integer(env, 'LOGIN_FAILURES_ALLOWED', 10),
    loginFailureWindowMs: integer(env, 'LOGIN_FAILURE_WINDOW_MS', MINUTE_MS),
    passwordConfirmationLifetimeMs: integer(env, 'PASSWORD_CONFIRMATION_LIFETIME_MS', DAY_MS),
    scryptCost: integer(env, 'SCRYPT_COST', 16384),
    quiet: env.QUIET === '1',
    adminPort: integer(env, 'ADMIN_PORT', 8081),
    adminKey: env.ADMIN_KEY?.trim() || null,
    requestLog: env.QUIET !== '1' && env.REQUEST_LOG !== '0',
    recoverOnStart: env.RECOVER_ON_START === '1',
    idleEvictMs: integer(env, 'IDLE_EVICT_MS', 30 * MINUTE_MS),
    maxActiveTenants: integer(env, 'MAX_ACTIVE_TENANTS', 10_000),
    readSliceMs: integer(env, 'READ_SLICE_MS', 4),
    tenantHeavyReadMsPerS: integer(env, 'TENANT_HEAVY_READ_MS_PER_S', 500),
  }
}
