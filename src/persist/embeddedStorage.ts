/*
 * The embedded storage (ports.ts): the LMDB environment in DATA_DIR, which
 * is the TenantLog (the write-ahead log) and the GlobalDirectory (the small
 * global tables beside it), and the snapshot files under DATA_DIR/snapshots
 * (snapshotDirectory.ts, the SnapshotStore), opened together by open().
 *
 *   log      key [tenant, seq] → a msgpack log entry (codec.ts)
 *   tenants  tenant → TenantInfo (the tenant directory)
 *   emails   [lower-cased e-mail, tenant] → '' for each tenant with a live
 *            user of it (the public check/find calls; tenants/globalIndexes.ts)
 *   files    [tenant, fileKey] → raw bytes of an uploaded file
 *   confirmations  [SHA-256 of a password confirmation, tenant] → '' (the
 *            public step 2 of a password change names no tenant)
 *
 * The log is opened twice: `log` writes and reads raw bytes, and
 * `logEntries` reads decoded entries. lmdb-js hands the second one's decoder
 * the bytes in its shared read buffer, where a binary read would first copy
 * each value into a new Buffer (about half the cost of reading an entry).
 * An entry that cannot be decoded comes out as an UndecodableEntry, so a
 * reader can name its sequence number.
 *
 * Group commit: lmdb-js gathers every put issued in one event-loop turn into
 * one transaction, so all commands decided in a turn share a commit. append()
 * resolves only after that commit is flushed to disk (`flushed`, not merely
 * committed): a response that waits for it can never be taken back by a
 * crash. Writes are never opened with noSync.
 */
import { open, type Database, type DatabaseOptions, type RootDatabase, type RootDatabaseOptionsWithPath } from 'lmdb'
import path from 'node:path'
import type { LogEntry, LoggedEntry } from '../engine/logEntry.js'
import { decodeLogEntry, encodeLogEntry } from './codec.js'
import { GroupCommitStats } from './groupCommitStats.js'
import { LogCorruptError, type GlobalIndexKey, type Storage, type TenantInfo } from './ports.js'
import { makePrivateDir, PRIVATE_FILE_MODE, tightenDataDir } from './privateFiles.js'
import { SnapshotDirectory } from './snapshotDirectory.js'
import { SnapshotFaults } from './snapshotFaults.js'
import { StoreSpace } from './storeSpace.js'

export type { GlobalIndexKey, TenantInfo }
export { LogCorruptError }

/** What `logEntries` yields for bytes that do not decode as a log entry. */
class UndecodableEntry {
  constructor(readonly cause: unknown) {}
}

const logEntryDecoder = {
  // Never used to write (appends go through `log`), but lmdb-js takes an encoder without `encode` for options
  // of its own msgpack encoder, and would decode with that instead.
  encode: encodeLogEntry,
  /** lmdb-js passes the value's length when iterating, and a get's options (usually none) on a get. */
  decode(bytes: Uint8Array, endOrOptions?: unknown): LoggedEntry | UndecodableEntry {
    try {
      return decodeLogEntry(bytes, typeof endOrOptions === 'number' ? endOrOptions : bytes.length)
    } catch (error) {
      return new UndecodableEntry(error)
    }
  },
}

export class EmbeddedStorage implements Storage {
  private readonly root: RootDatabase
  private readonly log: Database<Buffer, [string, number]>
  private readonly logEntries: Database<LoggedEntry | UndecodableEntry, [string, number]>
  readonly tenants: Database<TenantInfo, string>
  readonly emails: Database<string, GlobalIndexKey>
  readonly files: Database<Buffer, [string, string]>
  readonly confirmations: Database<string, GlobalIndexKey>
  /** Entries per commit and flush latency, for /metrics. */
  readonly commitStats = new GroupCommitStats()
  /** Corrupt snapshot files of this data directory found since start, for /metrics (snapshotFaults.ts). */
  readonly snapshotFaults = new SnapshotFaults()
  /** The snapshot files beside the environment (snapshotDirectory.ts). */
  readonly snapshots: SnapshotDirectory
  /** Pages in use against the LMDB_MAP_SIZE_BYTES ceiling (lmdb-js itself grows the map instead of failing). */
  readonly space: StoreSpace

  private constructor(root: RootDatabase, dataDir: string, limitBytes: number) {
    this.root = root
    this.snapshots = new SnapshotDirectory(dataDir, this.snapshotFaults)
    this.log = root.openDB({ name: 'log', encoding: 'binary' })
    // lmdb-js takes `encoder` in openDB's options too; its types declare it on the root's only.
    const logEntriesOptions: DatabaseOptions & { name: string; encoder: typeof logEntryDecoder } = { name: 'log', encoder: logEntryDecoder }
    this.logEntries = root.openDB(logEntriesOptions)
    this.tenants = root.openDB({ name: 'tenants', encoding: 'msgpack' })
    this.emails = root.openDB({ name: 'emails', encoding: 'string' })
    this.files = root.openDB({ name: 'files', encoding: 'binary' })
    this.confirmations = root.openDB({ name: 'confirmations', encoding: 'string' })
    this.space = new StoreSpace(root, [this.log, this.tenants, this.emails, this.files, this.confirmations], limitBytes)
  }

  static open(dataDir: string, mapSizeBytes: number): EmbeddedStorage {
    makePrivateDir(dataDir)
    // lmdb-js passes `permissionsMode` to mdb_env_open (its default 0664); its types do not declare it.
    const options: RootDatabaseOptionsWithPath & { permissionsMode: number } = {
      path: path.join(dataDir, 'ledger.mdb'),
      maxDbs: 8,
      mapSize: mapSizeBytes,
      compression: false,
      // Every write is flushed before it is acknowledged; see append().
      noSync: false,
      // A write's promise resolves at commit and carries `flushed`, the flush of that very commit.
      separateFlushed: true,
      // The data file and its lock file: private (privateFiles.ts); files made by an older version are tightened next.
      permissionsMode: PRIVATE_FILE_MODE,
    }
    const root = open(options)
    const tightened = tightenDataDir(dataDir)
    if (tightened.length > 0) console.error(`${dataDir}: ${tightened.length} files and folders readable by others made private (files 0600, folders 0700)`)
    return new EmbeddedStorage(root, dataDir, mapSizeBytes)
  }

  /** Queues the entry into the current group commit; resolves once it is on disk. */
  async append(tenant: string, seq: number, entry: LogEntry): Promise<number> {
    const bytes = encodeLogEntry(entry)
    const committed = this.log.put([tenant, seq], bytes) as Promise<boolean> & { flushed?: Promise<unknown> }
    // Wait for the flush of our own commit, not for whatever commit is the newest by then.
    const flushed = committed.flushed ?? this.log.flushed
    this.commitStats.noteAppend(committed, flushed)
    this.space.noteWritten(bytes.length)
    await committed
    await flushed
    return bytes.length
  }

  /** Log entries held, over all tenants (LMDB's own count: no scan). */
  logEntryCount(): number {
    return (this.log.getStats() as { entryCount: number }).entryCount
  }

  /** Waits until every write issued so far is on disk. */
  async flushed(): Promise<void> {
    await this.log.committed
    await this.log.flushed
  }

  *entriesAfter(tenant: string, afterSeq: number, uptoSeq = Number.MAX_SAFE_INTEGER): IterableIterator<{ seq: number; entry: LoggedEntry }> {
    for (const { key, value } of this.logEntries.getRange({ start: [tenant, afterSeq + 1], end: [tenant, uptoSeq + 1] })) {
      const seq = key[1]
      if (value instanceof UndecodableEntry) throw new LogCorruptError(tenant, seq, value.cause)
      yield { seq, entry: value }
    }
  }

  async readEntries(tenant: string, afterSeq: number, maxEntries: number): Promise<{ seq: number; entry: LoggedEntry }[]> {
    const entries: { seq: number; entry: LoggedEntry }[] = []
    for (const item of this.entriesAfter(tenant, afterSeq)) {
      if (entries.length >= maxEntries) break
      entries.push(item)
    }
    return entries
  }

  /** The tenant's logged sequence numbers in order, read without decoding the entries. */
  *seqs(tenant: string): IterableIterator<number> {
    for (const key of this.log.getKeys({ start: [tenant, 0], end: [tenant, Number.MAX_SAFE_INTEGER] })) yield key[1]
  }

  /** One entry, decoded; undefined when the tenant has no entry with that sequence number. */
  entryAt(tenant: string, seq: number): LoggedEntry | undefined {
    const entry = this.logEntries.get([tenant, seq])
    if (entry instanceof UndecodableEntry) throw new LogCorruptError(tenant, seq, entry.cause)
    return entry
  }

  /** The highest sequence number logged for the tenant, 0 when none. */
  lastSeq(tenant: string): number {
    for (const key of this.log.getKeys({ start: [tenant, Number.MAX_SAFE_INTEGER], end: [tenant, 0], reverse: true, limit: 1 })) return key[1]
    return 0
  }

  firstSeq(tenant: string): number {
    for (const key of this.log.getKeys({ start: [tenant, 0], end: [tenant, Number.MAX_SAFE_INTEGER], limit: 1 })) return key[1]
    return 0
  }

  logLength(tenant: string): number {
    return this.log.getKeysCount({ start: [tenant, 0], end: [tenant, Number.MAX_SAFE_INTEGER] })
  }

  hasEntry(tenant: string, seq: number): boolean {
    return this.log.doesExist([tenant, seq])
  }

  /** Raw access for operators and tests (e.g. damaging an entry on purpose). */
  rawEntry(tenant: string, seq: number): Buffer | undefined {
    return this.log.get([tenant, seq])
  }

  async putRawEntry(tenant: string, seq: number, bytes: Buffer): Promise<void> {
    await this.log.put([tenant, seq], bytes)
    await this.log.flushed
  }

  /** Removes log entries up to and including `uptoSeq` that were written before `beforeMs`. */
  async prune(tenant: string, uptoSeq: number, beforeMs: number): Promise<number> {
    let removed = 0
    await this.log.transaction(() => {
      for (const { key, value } of this.logEntries.getRange({ start: [tenant, 0], end: [tenant, uptoSeq + 1] })) {
        if (value instanceof UndecodableEntry || value.at >= beforeMs) break
        this.log.remove(key)
        removed += 1
      }
    })
    if (removed > 0) this.space.measure()
    return removed
  }

  /** Removes every log entry of the tenant after `afterSeq` (a restore to an earlier point). */
  async truncateAfter(tenant: string, afterSeq: number): Promise<void> {
    await this.log.transaction(() => {
      for (const key of this.log.getKeys({ start: [tenant, afterSeq + 1], end: [tenant, Number.MAX_SAFE_INTEGER] })) this.log.remove(key)
    })
    await this.log.flushed
  }

  replaceIndexes(emails: readonly [string, string][], confirmations: readonly [string, string][], marker: { key: string; value: string }): void {
    this.emails.transactionSync(() => {
      this.emails.clearSync()
      this.confirmations.clearSync()
      for (const key of emails) this.emails.putSync(key, '')
      for (const key of confirmations) this.confirmations.putSync(key, '')
      this.emails.putSync(marker.key, marker.value)
    })
  }

  async close(): Promise<void> {
    await this.root.close()
  }
}
