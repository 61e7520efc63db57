/*
 * The Storage of cluster mode (ports.ts; ARCHITECTURE.md §8) on PostgreSQL, opened by
 * openPgStorage: migrations first (pgMigrations.ts), then the listener of the
 * other nodes' directory changes started and the directory mirror loaded
 * (pgDirectory.ts listen: a change committed meanwhile is in the load or
 * arrives after it), then the log count.
 *
 *   writes        appends and directory writes go through the group commit
 *                 (groupCommit.ts), fenced by the epoch each tenant is held
 *                 at (`hold`/`unhold`, set by the cluster layer): a tenant
 *                 not held rejects at once with FencedError. Pruning,
 *                 truncation and snapshots are transactions fenced alike
 *                 (fencedTransaction.ts, pgSnapshots.ts).
 *   sync reads    of the tenant directory and the indexes: the mirror
 *                 (pgDirectory.ts). Of a tenant's log and snapshots: what
 *                 `prepare` loaded (preparedTenant.ts, its entries kept
 *                 current by preparedEntries.ts); a tenant never prepared
 *                 throws naming it. `forget` drops the bytes after recovery
 *                 and keeps the sequence numbers and the listing, which stay
 *                 current while the tenant is held; `unhold` drops them too.
 *   files         read from PostgreSQL on demand (a promise), never mirrored.
 *   leases, nodes SQL only (leases.ts, membership.ts); the cluster layer
 *                 decides.
 *
 * replaceIndexes rebuilds the indexes of an old LMDB layout: PostgreSQL's
 * tables never had that layout, so emails.get(GLOBAL_INDEX_LAYOUT_KEY)
 * answers the current layout (both strings are declared in ports.ts) and
 * the rebuild never runs; replaceIndexes itself is refused.
 *
 * No ceiling: `space` is never full. logEntryCount() is the count read at
 * open, kept by appends, pruning and truncation of this node (other nodes'
 * writes are not seen: a figure for /metrics, not a truth).
 */
import { assertionFailed } from '../../assert.js'
import { encodeLogEntry } from '../codec.js'
import type { LogEntry, LoggedEntry } from '../../engine/logEntry.js'
import type { DirectoryTable, FileTable, GlobalIndexKey, Storage, StoreCeiling, TenantInfo } from '../ports.js'
import { openSql, retryingLostConnection, type Sql, type TxSql } from './connection.js'
import { DirectoryMirror, type MirroredTable } from './directoryMirror.js'
import { FencedError } from './fencedError.js'
import { fencedTransaction } from './fencedTransaction.js'
import { GroupCommit, type QueuedAppend } from './groupCommit.js'
import { allLeases, claimLease, leaseOf, liveLeased, releaseLease, renewLeases, type ClaimResult, type LeaseRow } from './leases.js'
import { allNodes, heartbeat, registerNode, type NodeRow } from './membership.js'
import { PgDirectory } from './pgDirectory.js'
import { decoded, heldEntriesAfter, heldEntryAt, noteAppended, notePruned, noteTruncated } from './preparedEntries.js'
import { loadPreparedTenant, type PreparedTenant, type PrepareOptions } from './preparedTenant.js'
import { PgSnapshots } from './pgSnapshots.js'
import { migrate } from './pgMigrations.js'
import type { GroupCommitStats } from '../groupCommitStats.js'

const NO_CEILING: StoreCeiling = {
  limitBytes: 0,
  isFull: () => false,
  hasRoomFor: () => true,
  noteWritten: () => undefined,
  measure: () => 0,
}

export interface PgStorageOptions {
  /** This node's id: the lease owner it claims as, the sender of its directory notifications. */
  nodeId: string
  /** PostgreSQL's notices (default: dropped). */
  onNotice?: (message: string) => void
  /**
   * How long one of this node's transactions may sit idle before PostgreSQL ends it (connection.ts); a cluster node
   * gives it below its lease time, so a node paused inside a transaction cannot hold a takeover back past its lease.
   */
  idleInTransactionMs?: number
}

export async function openPgStorage(url: string, options: PgStorageOptions): Promise<PgStorage> {
  const sql = openSql(url, options.onNotice, options.idleInTransactionMs)
  try {
    await migrate(sql)
    const storage = new PgStorage(sql, options.nodeId)
    await storage.start()
    return storage
  } catch (error) {
    await sql.end({ timeout: 1 })
    throw error
  }
}

export class PgStorage implements Storage {
  readonly space = NO_CEILING
  readonly snapshots: PgSnapshots
  readonly tenants: DirectoryTable<string, TenantInfo>
  readonly emails: DirectoryTable<GlobalIndexKey, string>
  readonly confirmations: DirectoryTable<GlobalIndexKey, string>
  readonly files: FileTable
  private readonly directory: PgDirectory
  private readonly group: GroupCommit
  /** The epoch each tenant this node holds is written at. */
  private readonly held = new Map<string, number>()
  private readonly prepared = new Map<string, PreparedTenant>()
  private entryCount = 0

  constructor(
    readonly sql: Sql,
    readonly nodeId: string,
  ) {
    const mirror = new DirectoryMirror(nodeId)
    this.group = new GroupCommit(sql, mirror, {
      committed: (appends) => this.noteCommitted(appends),
      fenced: (tenant, epoch) => {
        if (this.held.get(tenant) === epoch) this.held.delete(tenant)
      },
    })
    this.snapshots = new PgSnapshots({
      sql,
      preparedOf: (tenant) => this.preparedOf(tenant),
      preparedIfAny: (tenant) => this.prepared.get(tenant),
      fenced: (tenant, work) => fencedTransaction(sql, tenant, this.held.get(tenant), work),
    })
    this.directory = new PgDirectory(sql, mirror, this.group, (tenant) => this.held.get(tenant))
    this.tenants = this.directory.tenants
    this.emails = this.directory.emails
    this.confirmations = this.directory.confirmations
    this.files = this.directory.files
  }

  get commitStats(): GroupCommitStats {
    return this.group.stats
  }

  /** Loads the mirror and listens for the other nodes' changes (pgDirectory.ts); counts the log. */
  async start(): Promise<void> {
    await this.directory.listen()
    const [row] = await this.sql<{ count: number }[]>`SELECT count(*) AS count FROM log`
    this.entryCount = row?.count ?? 0
  }

  // ── holding ──────────────────────────────────────────────────────────

  /** The cluster layer holds the tenant at `epoch`: its writes carry it from now on. */
  hold(tenant: string, epoch: number): void {
    this.held.set(tenant, epoch)
    this.group.repair(tenant)
  }

  /** The tenant is no longer this node's: its writes reject with FencedError, its prepared data goes. */
  unhold(tenant: string): void {
    this.held.delete(tenant)
    this.prepared.delete(tenant)
  }

  /** The epoch the tenant is held at; undefined when it is not held. */
  heldEpoch(tenant: string): number | undefined {
    return this.held.get(tenant)
  }

  /** Loads what the synchronous reads of the tenant's log and snapshots answer from (see the top). */
  async prepare(tenant: string, options: PrepareOptions = {}): Promise<void> {
    const prepared = await retryingLostConnection(() => loadPreparedTenant(this.sql, tenant, options, this.snapshots.faults, (name, problem) => this.snapshots.noteChecked(name, problem)))
    this.prepared.set(tenant, prepared)
  }

  /** Drops the tenant's prepared bytes (snapshot, entries); its sequence numbers and listing stay. */
  forget(tenant: string): void {
    const prepared = this.prepared.get(tenant)
    if (prepared === undefined) return
    prepared.loaded.clear()
    prepared.problems.clear()
    prepared.entries = null
  }

  private preparedOf(tenant: string): PreparedTenant {
    const prepared = this.prepared.get(tenant)
    if (prepared === undefined) assertionFailed(`tenant '${tenant}': its log and snapshots were not prepared (PgStorage.prepare) before a synchronous read`)
    return prepared
  }

  // ── the log ──────────────────────────────────────────────────────────

  append(tenant: string, seq: number, entry: LogEntry): Promise<number> {
    const epoch = this.held.get(tenant)
    if (epoch === undefined) return Promise.reject(new FencedError(tenant, 0))
    return this.group.append(tenant, seq, epoch, entry.at, encodeLogEntry(entry))
  }

  flushed(): Promise<void> {
    return this.group.flushed()
  }

  private noteCommitted(appends: readonly QueuedAppend[]): void {
    this.entryCount += appends.length
    for (const append of appends) {
      const prepared = this.prepared.get(append.tenant)
      if (prepared !== undefined) noteAppended(prepared, append.seq, append.bytes)
    }
  }

  async prune(tenant: string, uptoSeq: number, beforeMs: number): Promise<number> {
    // As the embedded store: from the first entry on, up to the first one written at or after beforeMs.
    const rows = await this.fenced(
      tenant,
      (tx) => tx<{ seq: number }[]>`
      DELETE FROM log WHERE tenant = ${tenant} AND seq <= ${String(uptoSeq)}
        AND seq < coalesce((SELECT min(seq) FROM log WHERE tenant = ${tenant} AND seq <= ${String(uptoSeq)} AND at >= ${String(beforeMs)}), ${String(Number.MAX_SAFE_INTEGER)})
      RETURNING seq`,
    )
    if (rows.length === 0) return 0
    this.entryCount -= rows.length
    const prepared = this.prepared.get(tenant)
    if (prepared !== undefined) notePruned(prepared, Math.max(...rows.map((row) => row.seq)))
    return rows.length
  }

  async truncateAfter(tenant: string, afterSeq: number): Promise<void> {
    await this.group.flushed()
    const rows = await this.fenced(tenant, (tx) => tx`DELETE FROM log WHERE tenant = ${tenant} AND seq > ${String(afterSeq)} RETURNING seq`)
    this.entryCount -= rows.length
    this.group.repair(tenant)
    const prepared = this.prepared.get(tenant)
    if (prepared !== undefined) noteTruncated(prepared, afterSeq)
  }

  private fenced<T>(tenant: string, work: (tx: TxSql) => Promise<T>): Promise<T> {
    return fencedTransaction(this.sql, tenant, this.held.get(tenant), work)
  }

  *entriesAfter(tenant: string, afterSeq: number, uptoSeq = Number.MAX_SAFE_INTEGER): IterableIterator<{ seq: number; entry: LoggedEntry }> {
    yield* heldEntriesAfter(tenant, this.preparedOf(tenant), afterSeq, uptoSeq)
  }

  async readEntries(tenant: string, afterSeq: number, maxEntries: number): Promise<{ seq: number; entry: LoggedEntry }[]> {
    const rows = await this.sql<{ seq: number; entry: Buffer }[]>`
      SELECT seq, entry FROM log WHERE tenant = ${tenant} AND seq > ${String(afterSeq)} ORDER BY seq LIMIT ${String(maxEntries)}`
    return rows.map((row) => ({ seq: Number(row.seq), entry: decoded(tenant, Number(row.seq), row.entry) }))
  }

  entryAt(tenant: string, seq: number): LoggedEntry | undefined {
    return heldEntryAt(tenant, this.preparedOf(tenant), seq)
  }

  seqs(tenant: string): IterableIterator<number> {
    return this.preparedOf(tenant).runs.seqs()
  }

  lastSeq(tenant: string): number {
    return this.preparedOf(tenant).runs.last
  }

  firstSeq(tenant: string): number {
    return this.preparedOf(tenant).runs.first
  }

  logLength(tenant: string): number {
    return this.preparedOf(tenant).runs.count
  }

  hasEntry(tenant: string, seq: number): boolean {
    return this.preparedOf(tenant).runs.has(seq)
  }

  logEntryCount(): number {
    return this.entryCount
  }

  // ── the directory (pgDirectory.ts) ───────────────────────────────────

  /** GlobalDirectory.freshen: the rows under `key` read into the mirror, this node's writes not yet committed kept. */
  freshen(table: MirroredTable, key: string): Promise<void> {
    return this.directory.freshen(table, key)
  }

  /** Reads the tenant's directory row from the database and brings the mirror up to it (a miss of the mirror). */
  refreshTenant(name: string): Promise<TenantInfo | undefined> {
    return this.directory.refreshTenant(name)
  }

  /** Refused: the layout this rebuild converts from never existed on PostgreSQL (see the top). */
  replaceIndexes(): void {
    throw new Error('replaceIndexes: the indexes on PostgreSQL are always of the current layout; nothing to rebuild')
  }

  // ── leases and membership ────────────────────────────────────────────

  claim(tenant: string, leaseMs: number): Promise<ClaimResult> {
    return claimLease(this.sql, tenant, this.nodeId, leaseMs)
  }

  renew(held: readonly { tenant: string; epoch: number }[], leaseMs: number): Promise<{ tenants: string[]; expiresAtMs: number; nowMs: number }> {
    return renewLeases(this.sql, this.nodeId, held, leaseMs)
  }

  release(tenant: string, epoch: number): Promise<boolean> {
    return releaseLease(this.sql, tenant, this.nodeId, epoch)
  }

  leaseOf(tenant: string): Promise<LeaseRow | undefined> {
    return leaseOf(this.sql, tenant)
  }

  leases(): Promise<LeaseRow[]> {
    return allLeases(this.sql)
  }

  liveLeased(tenants: readonly string[]): Promise<string[]> {
    return liveLeased(this.sql, tenants)
  }

  registerNode(internalUrl: string): Promise<void> {
    return registerNode(this.sql, this.nodeId, internalUrl)
  }

  heartbeat(): Promise<boolean> {
    return heartbeat(this.sql, this.nodeId)
  }

  nodes(): Promise<NodeRow[]> {
    return allNodes(this.sql)
  }

  /** Waits for the groups gathered so far, stops listening, ends the connections. */
  async close(): Promise<void> {
    this.directory.stopReloading()
    await this.group.flushed()
    await this.directory.stopListening()
    await this.sql.end({ timeout: 5 })
  }
}
