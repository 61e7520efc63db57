/*
 * The ports of persistence: what the tenant layer (src/tenants/) needs from
 * storage, and all it may use of it. The embedded implementation is the
 * LMDB environment in DATA_DIR (embeddedStorage.ts: TenantLog and GlobalDirectory)
 * with the snapshot files beside it (snapshotDirectory.ts: SnapshotStore),
 * opened together by EmbeddedStorage.open; only the wiring (service.ts, cli.ts)
 * constructs it. Cluster mode (ARCHITECTURE.md §8) implements the same ports on
 * PostgreSQL.
 *
 * Everything that writes is a Promise. Reads are synchronous where today's
 * behaviour needs the answer at once; each such member says why under
 * "synchronous". A second implementation that cannot answer at once must
 * load what they read beforehand (e.g. a tenant's log and snapshot before it
 * is touched) or the callers must move to the asynchronous forms (recovery
 * in turns is already written as steps, so it can await between slices).
 *
 *   TenantLog        the write-ahead log: per tenant, entries by sequence
 *                    number; append a group durably (group commit), read a
 *                    range, prune, truncate, first/last sequence number.
 *   SnapshotStore    the snapshots: per tenant, the whole state at one
 *                    sequence number; write, list, read, prune.
 *   GlobalDirectory  the facts across tenants: the tenant directory, the
 *                    e-mail and confirmation indexes, uploaded file bytes.
 *   Storage          the three together, as one data store provides them.
 */
import type { LogEntry, LoggedEntry } from '../engine/logEntry.js'
import type { Steps } from '../engine/steps.js'
import type { PoolImage, TableImage } from '../engine/tableImage.js'
import type { MaybePromise } from '../maybePromise.js'
import type { GroupCommitStats } from './groupCommitStats.js'
import type { SnapshotFaults } from './snapshotFaults.js'

/** How full the store is against its ceiling (embedded: LMDB_MAP_SIZE_BYTES, storeSpace.ts). */
export interface StoreCeiling {
  /** 0: no ceiling. */
  readonly limitBytes: number
  isFull(): boolean
  hasRoomFor(bytes: number): boolean
  noteWritten(bytes: number): void
  /** Measures what the store holds now (after a prune); answers the bytes in use. */
  measure(): number
}

/** What a TenantLog read throws for an entry that cannot be decoded: it names the tenant and the sequence number. */
export class LogCorruptError extends Error {
  override name = 'LogCorruptError'
  constructor(
    readonly tenant: string,
    readonly seq: number,
    cause: unknown,
  ) {
    super(`tenant '${tenant}': log entry ${seq} cannot be decoded (${cause instanceof Error ? cause.message : String(cause)})`)
  }
}

/** A restore point outside what the log and the snapshots still hold (answered 400 TL01-1105). */
export class RestorePointError extends Error {}

/** Bytes that are not a valid TimeLedger snapshot: bad magic, truncated, a failed check (answered 400 TL01-1105 on a restore). */
export class SnapshotInvalidError extends Error {}

export interface TenantLog {
  /** Queues the entry into the current group commit; resolves with its size once it is durable (ARCHITECTURE.md §2.2). */
  append(tenant: string, seq: number, entry: LogEntry): Promise<number>
  /** Resolves once every append issued so far is durable. */
  flushed(): Promise<void>
  /** Removes the tenant's entries up to and including `uptoSeq` that were written before `beforeMs`; answers how many. */
  prune(tenant: string, uptoSeq: number, beforeMs: number): Promise<number>
  /** Removes every entry of the tenant after `afterSeq` (a failed append, a restore to an earlier point). */
  truncateAfter(tenant: string, afterSeq: number): Promise<void>
  /**
   * The entries after `afterSeq` up to `uptoSeq`, in order. Synchronous: recovery runs at once when a request
   * touches a resting tenant's state (TenantActor.state) and in the operator tools; in turns it is iterated a
   * slice at a time. Throws LogCorruptError for an entry that cannot be decoded.
   */
  entriesAfter(tenant: string, afterSeq: number, uptoSeq?: number): IterableIterator<{ seq: number; entry: LoggedEntry }>
  /**
   * Up to `maxEntries` entries after `afterSeq`, in order, read from the store itself (cluster mode keeps no copy of
   * a tenant's log in memory after recovery): the change feed's resume from the log (tenants/changeFeed.ts).
   * Throws LogCorruptError for an entry that cannot be decoded.
   */
  readEntries(tenant: string, afterSeq: number, maxEntries: number): Promise<{ seq: number; entry: LoggedEntry }[]>
  /** One entry; synchronous (the history of a tenant, a restore point's time: operator actions). */
  entryAt(tenant: string, seq: number): LoggedEntry | undefined
  /** Whether the tenant has an entry at `seq`; synchronous (snapshot pruning asks it per snapshot). */
  hasEntry(tenant: string, seq: number): boolean
  /** The tenant's sequence numbers in order; synchronous (history: operator actions). */
  seqs(tenant: string): IterableIterator<number>
  /** Synchronous (an install or import numbers the state after the last entry, at once). 0 when none. */
  lastSeq(tenant: string): number
  firstSeq(tenant: string): number
  logLength(tenant: string): number
  /** Entries held over all tenants (/metrics). */
  logEntryCount(): number
  /** Synchronous: a write is refused before it is decided while the store is full (TenantActor). */
  readonly space: StoreCeiling
  /** Entries per commit and flush latency (/metrics). */
  readonly commitStats: GroupCommitStats
}

export interface SnapshotListing {
  seq: number
  /** Names the snapshot in this store (embedded: its file's path); what `read` and the reports take. */
  file: string
  bytes: number
}

export interface SnapshotHeader {
  format: number
  tenant: string
  seq: number
  at: number
  bodyBytes: number
  sha256: string
}

export interface SnapshotBody {
  collections: Record<string, unknown[]>
  /** State derived from the records, by name: its parts, a slice each (format 5 on). */
  derived?: Record<string, unknown[]>
  /** Format 6 on: the large collections as their columns, and the tenant's texts their codes name (engine/tableImage.ts). */
  columns?: { pool: PoolImage; tables: TableImage[] }
}

/** A collection's records as a snapshot writer reads them: a slice at a time, made as it is asked for (engine/frozenTable.ts). */
export interface RecordSlices {
  readonly size: number
  slices(records: number): Iterable<readonly unknown[]>
}

/** A collection frozen at one moment that a writer may also store as its columns (engine/frozenTable.ts). */
export interface ColumnSlices extends RecordSlices {
  image(): TableImage
}

/** What a snapshot is written from: a body, or collections read a slice at a time (a tenant's state frozen at one moment). */
export interface SnapshotSource {
  collections: Record<string, readonly unknown[] | RecordSlices | ColumnSlices>
  /** State derived from the records, by name: its parts, each made as the writer reaches it (a part per turn). */
  derived?: Record<string, Iterable<unknown>>
  /** The tenant's texts when collections are ColumnSlices, taken at the same moment (their codes name them). */
  pool?: PoolImage
  /** The fewest rows of a collection written as columns (persist/snapshotFormat6.ts COLUMN_MIN_ROWS unless a test asks for fewer). */
  columnsFrom?: number
}

/** A snapshot written whole but at no sequence number yet (SnapshotStore.writeUnplaced). */
export interface UnplacedSnapshot {
  /**
   * Makes it the tenant's snapshot at `seq`, listed and durable when this resolves; until then a crash leaves the
   * tenant's snapshots as they were. Short: a header written into the file and a rename (embedded), one transaction
   * (cluster mode).
   */
  place(seq: number): Promise<{ file: string; bytes: number }>
  /** Gives it up (nothing is placed after it). */
  discard(): Promise<void>
}

export interface SnapshotStore {
  /** The tenant's snapshots, newest first. Synchronous: recovery at once (see TenantLog.entriesAfter). */
  list(tenant: string): SnapshotListing[]
  /** Reads and checks one snapshot, pausing between its slices (steps: at once or in turns, as recovery runs). */
  readSteps(file: string): Steps<{ header: SnapshotHeader; body: SnapshotBody }>
  /** The header only; synchronous (history: operator actions). */
  readHeader(file: string): SnapshotHeader
  /** What recovery found of a snapshot it read in full: null when good (spares pruning a second check). */
  noteChecked(file: string, problem: string | null): void
  /** Writes the tenant's state at `seq`, taken at `at`, encoding it a slice per turn; durable when it resolves. */
  write(tenant: string, seq: number, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<{ file: string; bytes: number }>
  /**
   * Writes a snapshot as `write` does, but at no sequence number yet: not listed, not read by recovery, until it is
   * placed (an online restore writes the restored state while the tenant serves, and places it when it swaps it in:
   * tenants/installState.ts).
   */
  writeUnplaced(tenant: string, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<UnplacedSnapshot>
  /**
   * Keeps the newest `kept` good snapshots and those a restore within the window needs (snapshotFile.ts,
   * pruneSnapshots); answers the sequence number up to which the log is no longer needed (0: none).
   */
  prune(tenant: string, kept: number, windowStartMs: number, startsLogLine: (seq: number) => boolean): Promise<number>
  /** Removes the tenant's snapshots older than `seq` (a full store gives up its history: logSpace.ts). */
  removeOlderThan(tenant: string, seq: number): Promise<void>
  /** Corrupt snapshots found since start (/metrics). */
  readonly faults: SnapshotFaults
}

export interface TenantInfo {
  createdAt: number
  /** Set by sign-up until the account is confirmed: past createdAt + SIGNUP_CONFIRMATION_LIFETIME_MS its address and e-mail are free. */
  unconfirmed?: boolean
  /** Set while a tenant cannot be opened (its log is damaged). */
  damaged?: string
  /** Set while the tenant has an active webhook: the server wakes it at start, so deliveries go on without a request. */
  webhooks?: true
}

/** Key of the global index tables: [name, tenant]; a plain string is the layout marker or an entry of the old layout. */
export type GlobalIndexKey = [string, string] | string

/**
 * The layout marker of the emails table: under GLOBAL_INDEX_LAYOUT_KEY (a plain string, outside every [name, tenant]
 * key) the layout its entries have, GLOBAL_INDEX_LAYOUT now. tenants/globalIndexes.ts rebuilds both indexes of a
 * directory without it; PostgreSQL's tables never had another layout, so they answer it (postgres/pgStorage.ts).
 */
export const GLOBAL_INDEX_LAYOUT_KEY = '\u0001layout'
export const GLOBAL_INDEX_LAYOUT = 'name-tenant-2'

/**
 * One table of global facts. `put` and `remove` issued in the turn of a log append join its commit (group
 * commit), so a directory row or an index entry is durable exactly when the entry is. `get` and `getKeys` are
 * synchronous: the public calls that name no tenant (check an e-mail, a confirmation) and the check at a
 * tenant's creation answer at once, and the index entries are written inside a write, which is synchronous.
 */
export interface DirectoryTable<K, V> {
  get(key: K): V | undefined
  put(key: K, value: V): Promise<boolean>
  remove(key: K): Promise<boolean>
  /**
   * Keys from `start` (included) to `end` (excluded) in key order: strings by code point, an array key element by
   * element (embedded: LMDB's order). globalIndexes.ts reads one e-mail's
   * tenants as the range [e-mail, ''] to [e-mail, '\uffff'].
   */
  getKeys(range?: { start?: K; end?: K }): Iterable<K>
}

/**
 * The uploaded files' bytes: a DirectoryTable whose `get` may answer a promise, without getKeys (nothing lists
 * them). Embedded: at once (LMDB); cluster mode keeps no copy in memory and reads PostgreSQL. Only a download and
 * an export read them.
 */
export interface FileTable extends Omit<DirectoryTable<[string, string], Buffer>, 'get' | 'getKeys'> {
  get(key: [string, string]): MaybePromise<Buffer | undefined>
}

export interface GlobalDirectory {
  /** tenant → TenantInfo: which tenants exist. */
  readonly tenants: DirectoryTable<string, TenantInfo>
  /** [lower-cased e-mail, tenant] → '' for each tenant with a live user of it (tenants/globalIndexes.ts). */
  readonly emails: DirectoryTable<GlobalIndexKey, string>
  /** [SHA-256 of a password confirmation, tenant] → ''. */
  readonly confirmations: DirectoryTable<GlobalIndexKey, string>
  /** [tenant, fileKey] → the bytes of an uploaded file. */
  readonly files: FileTable
  /**
   * Cluster mode: reads what the shared store holds under `key` in one of the tables above (a tenant's row; the
   * entries of an e-mail, or of a confirmation) into this process's copy, so that the synchronous reads after it
   * see every write any node acknowledged before it was asked. Absent in the embedded mode, whose tables are the
   * store itself.
   */
  freshen?(table: 'tenants' | 'emails' | 'confirmations', key: string): Promise<void>
  /**
   * Replaces both indexes with these entries and the layout marker, in one transaction (a crash keeps the old
   * ones). Synchronous: it runs at start-up, before anything is served (rebuildGlobalIndexesIfOld).
   */
  replaceIndexes(emails: readonly [string, string][], confirmations: readonly [string, string][], marker: { key: string; value: string }): void
}

export interface Storage extends TenantLog, GlobalDirectory {
  readonly snapshots: SnapshotStore
}
