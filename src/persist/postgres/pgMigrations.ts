/*
 * The tables of cluster mode and their versioned migrations.
 *
 *   schema_migrations(version, applied_at)       one row per migration applied
 *   log(tenant, seq, at, entry)                  the tenant log: the msgpack entries of
 *                                                codec.ts, `at` copied out for pruning
 *   snapshots(tenant, seq, at, format, body_bytes, sha256, parts, total_bytes, corrupt)
 *   snapshot_parts(tenant, seq, part, bytes)     a snapshot's bytes (those of an embedded
 *                                                snapshot file) in parts of ≤ 1 MiB; `corrupt`
 *                                                set: set aside by pruning, no longer listed
 *   tenants(name, created_at, unconfirmed, damaged, webhooks)   the tenant directory
 *                                                (webhooks: TenantInfo.webhooks, migration 2)
 *   emails(email, tenant), confirmations(hash, tenant) the global indexes
 *   files(tenant, file_key, bytes)               uploaded file bytes
 *   leases(tenant, owner, epoch, expires_at)     one writer per tenant (leases.ts)
 *   nodes(id, internal_url, started_at, heartbeat_at)  membership (membership.ts)
 *
 * `migrate` runs at open, in one transaction under an advisory lock, so
 * nodes starting together apply each migration once and a failed migration
 * leaves the schema as it was. A database whose newest version is past the
 * last one this code knows was migrated by a newer TimeLedger: opening it
 * is refused, naming both versions. A migration is never edited once
 * released; a change is a new one at the end of MIGRATIONS.
 */
import type { Sql } from './connection.js'

/** pg_advisory_xact_lock's key for the migrations: "TLmig" as a number (below 2^53: it travels as a JS number). */
const MIGRATION_LOCK_KEY = 0x544c6d6967

const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE log (
    tenant text NOT NULL,
    seq bigint NOT NULL,
    at bigint NOT NULL,
    entry bytea NOT NULL,
    PRIMARY KEY (tenant, seq)
  );
  CREATE TABLE snapshots (
    tenant text NOT NULL,
    seq bigint NOT NULL,
    at bigint NOT NULL,
    format int NOT NULL,
    body_bytes bigint NOT NULL,
    sha256 text NOT NULL,
    parts int NOT NULL,
    total_bytes bigint NOT NULL,
    corrupt text,
    PRIMARY KEY (tenant, seq)
  );
  CREATE TABLE snapshot_parts (
    tenant text NOT NULL,
    seq bigint NOT NULL,
    part int NOT NULL,
    bytes bytea NOT NULL,
    PRIMARY KEY (tenant, seq, part),
    FOREIGN KEY (tenant, seq) REFERENCES snapshots (tenant, seq) ON DELETE CASCADE
  );
  CREATE TABLE tenants (
    name text PRIMARY KEY,
    created_at bigint NOT NULL,
    unconfirmed boolean NOT NULL DEFAULT false,
    damaged text
  );
  CREATE TABLE emails (
    email text NOT NULL,
    tenant text NOT NULL,
    PRIMARY KEY (email, tenant)
  );
  CREATE TABLE confirmations (
    hash text NOT NULL,
    tenant text NOT NULL,
    PRIMARY KEY (hash, tenant)
  );
  CREATE TABLE files (
    tenant text NOT NULL,
    file_key text NOT NULL,
    bytes bytea NOT NULL,
    PRIMARY KEY (tenant, file_key)
  );
  CREATE TABLE leases (
    tenant text PRIMARY KEY,
    owner text NOT NULL,
    epoch bigint NOT NULL,
    expires_at timestamptz NOT NULL
  );
  CREATE TABLE nodes (
    id text PRIMARY KEY,
    internal_url text NOT NULL,
    started_at timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL
  );
  `,
  // 2: the directory's webhook marker (TenantInfo.webhooks): the nodes wake the marked tenants nobody holds.
  `
  ALTER TABLE tenants ADD COLUMN webhooks boolean NOT NULL DEFAULT false;
  `,
]

/** The schema version this code writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length

export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError'
  constructor(readonly databaseVersion: number) {
    super(`the database's schema is at version ${databaseVersion}, newer than version ${SCHEMA_VERSION}, the newest this TimeLedger knows: upgrade TimeLedger`)
  }
}

/** Brings the schema to SCHEMA_VERSION; answers the versions applied now (none when it was current). */
export async function migrate(sql: Sql): Promise<number[]> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`
    const [row] = await tx<{ version: number | null }[]>`SELECT max(version) AS version FROM schema_migrations`
    const current = row?.version ?? 0
    if (current > SCHEMA_VERSION) throw new SchemaTooNewError(current)
    const applied: number[] = []
    for (let version = current + 1; version <= SCHEMA_VERSION; version += 1) {
      await tx.unsafe(MIGRATIONS[version - 1] as string)
      await tx`INSERT INTO schema_migrations (version) VALUES (${version})`
      applied.push(version)
    }
    return applied
  })
}
