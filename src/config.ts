/*
 * Configuration read from the environment, once, with a default for every
 * setting (ARCHITECTURE.md §4). Numbers carry their unit in the name. Nothing else in
 * the service reads process.env: the config object is passed down.
 */
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { OWASP_PASSWORD_COST, type PasswordCost } from './domain/credentials.js'

/**
 * Cluster mode (ARCHITECTURE.md §8): set when DATABASE_URL is. The node keeps its tenants' truth in PostgreSQL, holds a lease
 * per tenant it serves, and takes requests forwarded by the other nodes on its internal listener.
 */
export interface ClusterConfig {
  readonly databaseUrl: string
  /** This node's id in the membership table (NODE_ID; default host name and PORT). */
  readonly nodeId: string
  /** Port of the internal listener the other nodes forward to (INTERNAL_PORT; default PORT + 2; 0: any free port). */
  readonly internalPort: number
  /** Address the internal listener binds (INTERNAL_HOST; default HOST). */
  readonly internalHost: string
  /** Where the other nodes reach the internal listener (INTERNAL_URL; default http://INTERNAL_HOST:port). */
  readonly internalUrl: string | null
  /** Shared by every node: the two credentials of the internal listener are derived from it (CLUSTER_SECRET, required; http/clusterCredentials.ts). */
  readonly secret: string
  /** How long a tenant's lease lasts without renewal (LEASE_MS); renewed every third of it. */
  readonly leaseMs: number
}

export interface Config {
  readonly port: number
  readonly host: string
  readonly dataDir: string
  readonly baseDomain: string
  /** API keys accepted for login, refresh and public calls; empty: one is generated on first start. */
  readonly apiKeys: readonly string[]
  readonly maxBodyBytes: number
  /** Origins browser apps may call the API from (CORS_ORIGINS; http/cors.ts); null: CORS off. */
  readonly corsOrigins: CorsOrigins | null
  /**
   * Addresses and CIDR ranges of the proxies whose report of the client's address is believed (TRUSTED_PROXIES;
   * http/clientAddress.ts): PROXY protocol v2 or X-Forwarded-For. Empty (the default): the connection's peer is the client.
   */
  readonly trustedProxies: readonly string[]
  /** Smallest text answer sent compressed to a client that accepts brotli or gzip (http/compression.ts; 0: off). */
  readonly compressionMinBytes: number
  /** A change feed subscriber with more than this waiting for it is disconnected (4409: too slow). */
  readonly changeFeedMaxBufferedBytes: number
  /** What all change feed subscribers of this node may have waiting for them together; past it the slowest are cut (0: no budget). */
  readonly changeFeedMaxBufferedBytesPerNode: number
  /** Change feed subscriptions open at once per user of a tenant, per tenant and on this node (0: no limit); past one, 429. */
  readonly changeFeedMaxSubscriptionsPerUser: number
  readonly changeFeedMaxSubscriptionsPerTenant: number
  readonly changeFeedMaxSubscriptionsPerNode: number
  readonly tokenLifetimeMs: number
  readonly refreshedTokenLifetimeMs: number
  readonly refreshTokenLifetimeMs: number
  readonly snapshotEveryCommands: number
  readonly snapshotEveryLogBytes: number
  readonly snapshotsKept: number
  readonly logRetentionMs: number
  readonly lmdbMapSizeBytes: number
  /** At a full store, the least time between two reclaims of one tenant's log (tenants/logSpace.ts). */
  readonly reclaimMinIntervalMs: number
  readonly maxFileBytes: number
  /** Largest body of an import (`POST /v1/import/{source}`: a CSV file; MAX_IMPORT_BYTES). */
  readonly maxImportBytes: number
  /** Most rows of one import (and so time records of one write; MAX_IMPORT_ROWS). */
  readonly maxImportRows: number
  readonly rateLimitRequests: number
  readonly rateLimitWindowMs: number
  /** Failed logins allowed per (tenant, login name, client address) in a window; then refused for a window (0: off). */
  readonly loginFailuresAllowed: number
  /** … per (tenant, login name) from sources that did not log in lately (the account lockout; 0: off). */
  readonly loginAccountFailuresAllowed: number
  /** … per (tenant, client address) from such sources (0: off). */
  readonly loginAddressFailuresAllowed: number
  /** … per client address over all tenants from such sources (0: off). */
  readonly loginAddressFailuresAllowedAllTenants: number
  /** How long a right password makes its (tenant, name, address) a known source, bound only by its own failures (0: never). */
  readonly loginKnownSourceMs: number
  readonly loginFailureWindowMs: number
  /** Wrong API keys allowed per client address in a LOGIN_FAILURE_WINDOW_MS; then refused for as long (0: off). */
  readonly apiKeyFailuresAllowed: number
  /** How long a password-change confirmation works. */
  readonly passwordConfirmationLifetimeMs: number
  /** How long a request's Idempotency-Key answers its kept answer (http/keyedWrite.ts). */
  readonly idempotencyKeyLifetimeMs: number
  /** Most kept answers of Idempotency-Keys a tenant holds; past it the oldest go first (domain/operations/keptAnswers.ts). */
  readonly idempotencyKeysPerTenant: number
  /** Argon2id cost of new password hashes (PASSWORD_HASH_MEMORY_KIB, PASSWORD_HASH_PASSES; one lane). */
  readonly passwordCost: PasswordCost
  /** How long a sign-up waits for its confirmation; past it its address and owner e-mail are free again. */
  readonly signUpConfirmationLifetimeMs: number
  /** SMTP server for outgoing mail (nodemailer URL); null: mails are written as .eml files under DATA_DIR/outbox. */
  readonly smtpUrl: string | null
  /** Sender of outgoing mail; null: `TimeLedger <no-reply@BASE_DOMAIN>`. */
  readonly mailFrom: string | null
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
  /** Most requests waiting in one tenant's mailbox for its exclusive job; past it a request gets 503 (tenants/mailbox.ts; 0: no limit). */
  readonly tenantMailboxMaxRequests: number
  /** Longest slice of a long read (scan, sort, summary, report) before it yields to the event loop (tenants/slicedRead.ts). */
  readonly readSliceMs: number
  /** CPU ms per second a tenant's heavy reads may take; past it they get 429 (tenants/heavyReadBudget.ts; 0: no budget). */
  readonly tenantHeavyReadMsPerS: number
  /** Webhook URLs may resolve to private, loopback and link-local addresses (WEBHOOK_ALLOW_PRIVATE=1; the guard in webhooks/webhookPost.ts). */
  readonly webhookAllowPrivate: boolean
  /** The first retry of a failed delivery waits this long; each next one twice as long (with jitter). */
  readonly webhookRetryBaseMs: number
  /** The longest wait between two attempts. */
  readonly webhookRetryMaxDelayMs: number
  /** How long after its first failed attempt an event is given up (marked failed, the cursor moves past it). */
  readonly webhookRetryLimitMs: number
  /** How long one POST to a webhook may take. */
  readonly webhookTimeoutMs: number
  /** null: the embedded default (LMDB in DATA_DIR). */
  readonly cluster: ClusterConfig | null
}

/** The origins allowed to call the API from a browser (http/cors.ts): any (`*`), or exact ones (scheme://host[:port], lower case). */
export type CorsOrigins = '*' | ReadonlySet<string>

/** An origin as a browser sends it: scheme, host and an optional port, nothing more. */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s@]+$/

/** CORS_ORIGINS read: null when empty (CORS off); throws on an entry that is not an origin. */
export function parseCorsOrigins(text: string): CorsOrigins | null {
  const entries = text
    .split(',')
    .map((entry) => entry.trim().toLowerCase().replace(/\/+$/, ''))
    .filter((entry) => entry !== '')
  if (entries.length === 0) return null
  if (entries.includes('*')) return '*'
  for (const entry of entries) {
    if (!ORIGIN.test(entry)) throw new Error(`CORS_ORIGINS: '${entry}' is not an origin such as https://app.example.com (or * for any)`)
  }
  return new Set(entries)
}

/** TRUSTED_PROXIES read: addresses and CIDR ranges (`10.0.0.0/8`, `::1`); throws naming an entry that is neither. */
export function parseTrustedProxies(text: string): string[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/')
    const family = net.isIP(address ?? '')
    const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32))
    if (family === 0 || !bitsOk || extra !== undefined) throw new Error(`TRUSTED_PROXIES: '${entry}' is not an address or a CIDR range such as 10.0.0.0/8`)
  }
  return entries
}

/**
 * Smallest answer sent compressed by default: compressing costs 10–25 µs whatever the size (about a tenth of the
 * cheapest answer's CPU), and below 1 KiB it saves under 512 bytes, less than half a TCP segment (bench/RESULTS.md,
 * "Compression").
 */
const DEFAULT_COMPRESSION_MIN_BYTES = 1024

/**
 * Requests one tenant may have waiting for its exclusive job (a batch, a long read in slices, a restore, an eviction's
 * snapshot): far more than its users' connections send in the seconds the longest such job takes, few enough that a
 * burst against one held tenant cannot hold requests (and their bodies) in memory without bound.
 */
const DEFAULT_TENANT_MAILBOX_MAX_REQUESTS = 1000

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
    apiKeys: (env.API_KEYS ?? '')
      .split(',')
      .map((key) => key.trim())
      .filter((key) => key !== ''),
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 1024 * 1024),
    corsOrigins: parseCorsOrigins(env.CORS_ORIGINS ?? ''),
    trustedProxies: parseTrustedProxies(env.TRUSTED_PROXIES ?? ''),
    compressionMinBytes: integer(env, 'COMPRESSION_MIN_BYTES', DEFAULT_COMPRESSION_MIN_BYTES),
    changeFeedMaxBufferedBytes: integer(env, 'CHANGE_FEED_MAX_BUFFERED_BYTES', 4 * 1024 * 1024),
    changeFeedMaxBufferedBytesPerNode: integer(env, 'CHANGE_FEED_MAX_BUFFERED_BYTES_PER_NODE', 64 * 1024 * 1024),
    changeFeedMaxSubscriptionsPerUser: integer(env, 'CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_USER', 20),
    changeFeedMaxSubscriptionsPerTenant: integer(env, 'CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_TENANT', 500),
    changeFeedMaxSubscriptionsPerNode: integer(env, 'CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_NODE', 10_000),
    tokenLifetimeMs: integer(env, 'TOKEN_LIFETIME_MS', 60 * MINUTE_MS),
    refreshedTokenLifetimeMs: integer(env, 'REFRESHED_TOKEN_LIFETIME_MS', 7 * DAY_MS),
    refreshTokenLifetimeMs: integer(env, 'REFRESH_TOKEN_LIFETIME_MS', 30 * DAY_MS),
    snapshotEveryCommands: integer(env, 'SNAPSHOT_EVERY_COMMANDS', 50_000),
    snapshotEveryLogBytes: integer(env, 'SNAPSHOT_EVERY_LOG_BYTES', 64 * 1024 * 1024),
    snapshotsKept: Math.max(1, integer(env, 'SNAPSHOTS_KEPT', 3)),
    logRetentionMs: integer(env, 'LOG_RETENTION_MS', 7 * DAY_MS),
    lmdbMapSizeBytes: integer(env, 'LMDB_MAP_SIZE_BYTES', 16 * 1024 * 1024 * 1024),
    reclaimMinIntervalMs: integer(env, 'RECLAIM_MIN_INTERVAL_MS', 10_000),
    maxFileBytes: integer(env, 'MAX_FILE_BYTES', 5 * 1024 * 1024),
    maxImportBytes: integer(env, 'MAX_IMPORT_BYTES', 32 * 1024 * 1024),
    maxImportRows: integer(env, 'MAX_IMPORT_ROWS', 100_000),
    rateLimitRequests: integer(env, 'RATE_LIMIT_REQUESTS', 500),
    rateLimitWindowMs: integer(env, 'RATE_LIMIT_WINDOW_MS', 10_000),
    loginFailuresAllowed: integer(env, 'LOGIN_FAILURES_ALLOWED', 10),
    loginAccountFailuresAllowed: integer(env, 'LOGIN_ACCOUNT_FAILURES_ALLOWED', 50),
    loginAddressFailuresAllowed: integer(env, 'LOGIN_ADDRESS_FAILURES_ALLOWED', 30),
    loginAddressFailuresAllowedAllTenants: integer(env, 'LOGIN_ADDRESS_FAILURES_ALLOWED_ALL_TENANTS', 100),
    loginKnownSourceMs: integer(env, 'LOGIN_KNOWN_SOURCE_MS', 30 * DAY_MS),
    loginFailureWindowMs: integer(env, 'LOGIN_FAILURE_WINDOW_MS', MINUTE_MS),
    apiKeyFailuresAllowed: integer(env, 'API_KEY_FAILURES_ALLOWED', 10),
    passwordConfirmationLifetimeMs: integer(env, 'PASSWORD_CONFIRMATION_LIFETIME_MS', DAY_MS),
    idempotencyKeyLifetimeMs: integer(env, 'IDEMPOTENCY_KEY_LIFETIME_MS', DAY_MS),
    idempotencyKeysPerTenant: Math.max(1, integer(env, 'IDEMPOTENCY_KEYS_PER_TENANT', 10_000)),
    passwordCost: {
      memoryKiB: Math.max(8, integer(env, 'PASSWORD_HASH_MEMORY_KIB', OWASP_PASSWORD_COST.memoryKiB)),
      passes: Math.max(1, integer(env, 'PASSWORD_HASH_PASSES', OWASP_PASSWORD_COST.passes)),
      parallelism: OWASP_PASSWORD_COST.parallelism,
    },
    signUpConfirmationLifetimeMs: integer(env, 'SIGNUP_CONFIRMATION_LIFETIME_MS', DAY_MS),
    smtpUrl: env.SMTP_URL?.trim() || null,
    mailFrom: env.MAIL_FROM?.trim() || null,
    quiet: env.QUIET === '1',
    adminPort: integer(env, 'ADMIN_PORT', 8081),
    adminKey: env.ADMIN_KEY?.trim() || null,
    requestLog: env.QUIET !== '1' && env.REQUEST_LOG !== '0',
    recoverOnStart: env.RECOVER_ON_START === '1',
    idleEvictMs: integer(env, 'IDLE_EVICT_MS', 30 * MINUTE_MS),
    maxActiveTenants: integer(env, 'MAX_ACTIVE_TENANTS', 10_000),
    tenantMailboxMaxRequests: integer(env, 'TENANT_MAILBOX_MAX_REQUESTS', DEFAULT_TENANT_MAILBOX_MAX_REQUESTS),
    readSliceMs: integer(env, 'READ_SLICE_MS', 4),
    tenantHeavyReadMsPerS: integer(env, 'TENANT_HEAVY_READ_MS_PER_S', 500),
    webhookAllowPrivate: env.WEBHOOK_ALLOW_PRIVATE === '1',
    webhookRetryBaseMs: Math.max(1, integer(env, 'WEBHOOK_RETRY_BASE_MS', 1000)),
    webhookRetryMaxDelayMs: Math.max(1, integer(env, 'WEBHOOK_RETRY_MAX_DELAY_MS', 60 * MINUTE_MS)),
    webhookRetryLimitMs: integer(env, 'WEBHOOK_RETRY_LIMIT_MS', DAY_MS),
    webhookTimeoutMs: Math.max(1, integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000)),
    cluster: clusterConfig(env),
  }
}

/** The lease time when LEASE_MS is not set: a dead node's tenants move within it (plus their activation). */
const DEFAULT_LEASE_MS = 3_000
/** Shortest lease: renewals every third of it must fit in a loaded event loop. */
const MIN_LEASE_MS = 300

function clusterConfig(env: NodeJS.ProcessEnv): ClusterConfig | null {
  const databaseUrl = env.DATABASE_URL?.trim()
  if (databaseUrl === undefined || databaseUrl === '') return null
  const secret = env.CLUSTER_SECRET?.trim() ?? ''
  if (secret.length < 16) throw new Error('cluster mode (DATABASE_URL) needs CLUSTER_SECRET: at least 16 characters shared by every node')
  const port = integer(env, 'PORT', 8080)
  const leaseMs = integer(env, 'LEASE_MS', DEFAULT_LEASE_MS)
  if (leaseMs < MIN_LEASE_MS) throw new Error(`LEASE_MS must be at least ${MIN_LEASE_MS}, got ${leaseMs}`)
  return {
    databaseUrl,
    nodeId: env.NODE_ID?.trim() || `${os.hostname()}-${port}`,
    internalPort: integer(env, 'INTERNAL_PORT', port === 0 ? 0 : port + 2),
    internalHost: env.INTERNAL_HOST?.trim() || env.HOST || '127.0.0.1',
    internalUrl: env.INTERNAL_URL?.trim() || null,
    secret,
    leaseMs,
  }
}
