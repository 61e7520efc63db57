/*
 * The tenant actor: the only owner of one tenant's state.
 *
 * Writes. A write is decided and applied synchronously against the current
 * state (WriteTx), then its operations are appended to the log as one entry
 * with the next sequence number. Because deciding is synchronous, writes are
 * serialized without locks; every write issued in one event-loop turn shares
 * an LMDB commit (group commit). The caller gets its result only after the
 * entry is flushed to disk.
 *
 * Reads. A read computes its answer from memory at once, then waits until
 * every entry applied so far is durable before the answer is released, so
 * no response shows state that a crash could take back (design §2.3).
 * When the tenant is idle and all of it is durable already (no write in
 * flight), the answer is returned as it is, not as a promise: a GET then
 * answers inside the HTTP handler that received it (maybePromise.ts).
 *
 * Long reads. A scan, sort, summary or report is written as steps and
 * read in slices (readInSlices, slicedRead.ts): its first slice runs at
 * once like any read; should it need more, the actor holds the tenant from
 * that moment (synchronously, so no write comes between) until its last
 * slice, one slice per event-loop turn. The read therefore answers one
 * state, as a read of one piece would; the tenant's own requests wait for
 * it, the other tenants' go on between its slices. Its answer then waits
 * for the durable barrier like any read. The slices' time is spent from the
 * tenant's heavy-read budget (heavyReadBudget.ts).
 *
 * Exclusive jobs. Activation, a batch and an online restore need the tenant
 * to themselves across awaits; they run one at a time and other requests wait
 * for them (the mailbox).
 *
 * Rest. An idle tenant may be put to rest (hibernate(), inside an exclusive
 * job, after its snapshot): its state is dropped and reloaded from disk the
 * moment anything touches `state` again, so a reference held by a request
 * in flight stays valid. Callers waiting for an exclusive job are counted
 * (`waiting`, the mailbox depth).
 *
 * Failure. If an append fails (disk or map full), nothing from that entry on
 * is acknowledged: the tenant truncates the log after the last entry that
 * made it and reloads its state from disk, so memory never holds a change the
 * log does not. Callers get WritesUnavailable (503 TL01-9011) and may retry.
 *
 * Full. While the log store holds its ceiling (LMDB_MAP_SIZE_BYTES, see
 * persist/storeSpace.ts) a write is refused (StoreFull, 503) before it is
 * decided (a batch, which decides first, is rolled back), and the tenant
 * reclaims the space of its own log (logSpace.ts, held back to one reclaim
 * per RECLAIM_MIN_INTERVAL_MS); reads go on. Bytes a write stores beside its
 * log entry (an upload) are checked against the ceiling while it is decided,
 * before they are put (refuseUnlessRoomFor), and refused the same way.
 */
import type { Config } from '../config.js'
import { assert } from '../domain/errors.js'
import type { MaybePromise } from '../maybePromise.js'
import type { Storage } from '../persist/ports.js'
import { recoverTenant, recoverTenantInTurns, snapshotBodyOf, type Recovered, type RecoveryReport } from './recovery.js'
import { indexGlobals } from './globalIndexes.js'
import { HeavyReadBudget } from './heavyReadBudget.js'
import { reclaimLogSpace } from './logSpace.js'
import { LOG_ENTRY_FORMAT, type LogEntry } from '../engine/logEntry.js'
import { SlicedRead } from './slicedRead.js'
import type { Steps } from '../engine/steps.js'
import { TenantState } from '../engine/tenantState.js'
import { FileTooLarge, StoreFull, WritesUnavailable } from './tenantErrors.js'
import { WriteTx } from '../engine/writeTx.js'

export interface SnapshotResult {
  seq: number
  file: string
  bytes: number
  durationMs: number
}


export class TenantActor {
  /** The state in memory; null while the tenant rests. */
  private loaded: TenantState | null = null
  /** Highest sequence number known to be on disk. */
  private durableSeq: number
  /** The flush of the newest appended entry (it covers every earlier one). */
  private lastFlush: Promise<void> = Promise.resolve()
  /** Set when an append failed: entries from this sequence on are not durable. */
  private failedFromSeq: number | null = null
  private busy: Promise<void> | null = null
  private entriesSinceSnapshot = 0
  private logBytesSinceSnapshot = 0
  private snapshotRunning: Promise<SnapshotResult> | null = null
  lastRecovery: RecoveryReport
  lastSnapshotAt: number | null = null
  /** Callers waiting for an exclusive job to finish (the mailbox depth). */
  waiting = 0
  /** When a request last asked for this tenant (idle eviction, least recently used). */
  lastUsedMs = Date.now()
  /** Told when a resting tenant is loaded again. */
  private onWake: (() => void) | null = null
  /** The CPU budget of this tenant's heavy reads (heavyReadBudget.ts, slicedRead.ts). */
  readonly heavyReads: HeavyReadBudget

  private constructor(
    readonly tenant: string,
    private readonly config: Config,
    private readonly store: Storage,
    state: TenantState,
    report: RecoveryReport,
  ) {
    this.state = state
    this.durableSeq = state.seq
    this.lastRecovery = report
    this.entriesSinceSnapshot = report.replayedEntries
    this.heavyReads = new HeavyReadBudget(config.tenantHeavyReadMsPerS)
  }

  /** Activates an existing tenant: its newest valid snapshot plus the log after it. */
  static recover(tenant: string, config: Config, store: Storage, onReplay?: (entriesDone: number) => void): TenantActor {
    const { state, report } = recoverTenant(tenant, config.dataDir, store, { onProgress: onReplay })
    return new TenantActor(tenant, config, store, state, report)
  }

  /** recover, a slice per event-loop turn: a server activating a large tenant keeps serving the others. */
  static async recoverInTurns(tenant: string, config: Config, store: Storage): Promise<TenantActor> {
    const { state, report } = await recoverTenantInTurns(tenant, config.dataDir, store)
    return new TenantActor(tenant, config, store, state, report)
  }

  /** A tenant that is being created: empty state, nothing logged yet. */
  static fresh(tenant: string, config: Config, store: Storage): TenantActor {
    const report: RecoveryReport = { snapshotSeq: 0, snapshotFile: null, replayedEntries: 0, skippedSnapshots: [], durationMs: 0 }
    return new TenantActor(tenant, config, store, new TenantState(tenant), report)
  }

  /**
   * The tenant's state; a resting tenant is reloaded from disk (its newest snapshot and the log after it) at once,
   * holding up every tenant meanwhile: requests wake it with `wake` first.
   */
  get state(): TenantState {
    if (this.loaded !== null) return this.loaded
    return this.reloaded(recoverTenant(this.tenant, this.config.dataDir, this.store))
  }

  /**
   * Reloads a resting tenant a slice per event-loop turn, as an exclusive job (its requests wait in the mailbox).
   * Should something touch `state` meanwhile (reloading it at once), that state is kept: writes may have gone to it.
   */
  async wake(): Promise<void> {
    if (this.loaded !== null) return
    await this.exclusive(async () => {
      if (this.loaded !== null) return
      const recovered = await recoverTenantInTurns(this.tenant, this.config.dataDir, this.store)
      if (this.loaded === null) this.reloaded(recovered)
    })
  }

  private reloaded({ state, report }: Recovered): TenantState {
    this.lastRecovery = report
    this.entriesSinceSnapshot = report.replayedEntries
    this.logBytesSinceSnapshot = 0
    this.state = state
    return state
  }

  set state(state: TenantState) {
    const wasResting = this.loaded === null
    this.loaded = state
    if (wasResting && this.onWake !== null) {
      const onWake = this.onWake
      this.onWake = null
      onWake()
    }
  }

  /** Longest slice of a long read (READ_SLICE_MS). */
  get sliceMs(): number {
    return this.config.readSliceMs
  }

  get resting(): boolean {
    return this.loaded === null
  }

  get logEntriesSinceSnapshot(): number {
    return this.entriesSinceSnapshot
  }

  /** Drops the state from memory (the caller holds the tenant exclusively, and everything logged is durable). */
  hibernate(onWake: () => void): void {
    assert(this.busy !== null, 'hibernate outside an exclusive job')
    assert(this.durableSeq >= (this.loaded?.seq ?? 0), 'hibernate with entries not yet durable')
    this.loaded = null
    this.onWake = onWake
  }

  private async waitTurn(): Promise<void> {
    this.waiting += 1
    try {
      await this.busy
    } finally {
      this.waiting -= 1
    }
  }

  /**
   * Runs a synchronous read and releases its answer once everything it could see is durable: at once (not through
   * a promise) when the tenant is idle and all of it already is (maybePromise.ts).
   */
  read<T>(query: (state: TenantState) => T): MaybePromise<T> {
    if (this.busy !== null) return this.waitTurn().then(() => this.read(query))
    const result = query(this.state)
    const seq = this.state.seq
    return seq <= this.durableSeq ? result : this.durable(seq).then(() => result)
  }

  /**
   * Runs a read written as steps in slices (see the top): its answer at once when it ends in its first slice and
   * all it saw is durable; else the tenant is held until its last slice, and the answer released once durable.
   */
  readInSlices<T>(query: (state: TenantState) => Steps<T>): MaybePromise<T> {
    if (this.busy !== null) return this.waitTurn().then(() => this.readInSlices(query))
    const read = new SlicedRead(query(this.state), this.heavyReads, this.sliceMs)
    if (read.first()) {
      const seq = this.state.seq
      return seq <= this.durableSeq ? read.value : this.durable(seq).then(() => read.value)
    }
    let seq = 0
    return this.hold(async () => {
      const value = await read.rest()
      seq = this.state.seq
      return value
    }).then(async (value) => {
      await this.durable(seq)
      return value
    })
  }

  /** Runs a synchronous read of the current state, durable or not (see TenantAccess.inspect); at once when idle. */
  inspect<T>(query: (state: TenantState) => T): MaybePromise<T> {
    if (this.busy !== null) return this.waitTurn().then(() => this.inspect(query))
    return query(this.state)
  }

  /** Decides and applies a write, logs it, and resolves once it is on disk. */
  async write<T>(decide: (tx: WriteTx) => T): Promise<T> {
    while (this.busy !== null) await this.waitTurn()
    return this.writeNow(decide)
  }

  /** A write for a caller that already holds the tenant (inside an exclusive job). */
  async writeNow<T>(decide: (tx: WriteTx) => T): Promise<T> {
    this.refuseWhileFailed()
    this.refuseWhileFull()
    const tx = new WriteTx(this.state, Date.now(), (bytes) => this.refuseUnlessRoomFor(bytes))
    let result: T
    try {
      result = decide(tx)
    } catch (error) {
      tx.rollback()
      throw error
    }
    await this.commit(tx)
    return result
  }

  /** Logs what a WriteTx applied (nothing when it applied nothing) and waits for it to be durable. */
  async commit(tx: WriteTx): Promise<void> {
    if (tx.ops.length === 0) return this.durable(this.state.seq)
    if (this.store.space.isFull()) {
      // A batch decides before it commits: undo what it applied, so memory holds nothing the log did not take.
      tx.rollback()
      this.refuseFull()
    }
    const seq = this.state.seq + 1
    const entry: LogEntry = { v: LOG_ENTRY_FORMAT, at: tx.now, ops: tx.ops }
    try {
      indexGlobals(this.store, this.tenant, tx)
    } catch (error) {
      // Nothing went to the log: memory goes back to what the log holds.
      tx.rollback()
      throw error
    }
    this.state.seq = seq
    this.store.space.noteWritten(tx.storedBytes)
    const flush = this.store.append(this.tenant, seq, entry).then(
      (bytes) => {
        if (this.failedFromSeq !== null && seq >= this.failedFromSeq) throw new WritesUnavailable()
        if (seq > this.durableSeq) this.durableSeq = seq
        this.noteLogged(bytes)
      },
      (error: unknown) => {
        this.fail(seq, error)
        throw new WritesUnavailable()
      },
    )
    this.lastFlush = flush.catch(() => undefined)
    return flush
  }

  /** Runs a job that needs the tenant to itself across awaits. */
  async exclusive<T>(job: () => Promise<T>): Promise<T> {
    while (this.busy !== null) await this.waitTurn()
    return this.hold(job)
  }

  /** Takes the tenant now (it must be free), before `job` starts, and gives it back when the job ends. */
  private async hold<T>(job: () => Promise<T>): Promise<T> {
    assert(this.busy === null, 'hold while the tenant is held')
    let release!: () => void
    this.busy = new Promise((resolve) => (release = resolve))
    try {
      return await job()
    } finally {
      this.busy = null
      release()
    }
  }

  /** Resolves once every entry up to `seq` is on disk. */
  async durable(seq: number): Promise<void> {
    if (seq <= this.durableSeq) return
    await this.lastFlush
    if (this.failedFromSeq !== null || seq > this.durableSeq) throw new WritesUnavailable()
  }

  /**
   * Writes a snapshot of the current state (once the log under it is durable) and prunes the snapshots and log
   * entries that no restore within LOG_RETENTION_MS needs. `onProgress` hears the records written so far.
   */
  snapshot(onProgress?: (recordsDone: number) => void): Promise<SnapshotResult> {
    if (this.snapshotRunning !== null) return this.snapshotRunning
    const started = performance.now()
    const seq = this.state.seq
    const at = Date.now()
    const body = snapshotBodyOf(this.state)
    this.entriesSinceSnapshot = 0
    this.logBytesSinceSnapshot = 0
    this.snapshotRunning = (async () => {
      await this.durable(seq)
      const { file, bytes } = await this.store.snapshots.write(this.tenant, seq, at, body, onProgress)
      const windowStartMs = at - this.config.logRetentionMs
      const startsLogLine = (snapshotSeq: number) => !this.store.hasEntry(this.tenant, snapshotSeq)
      const logNotNeededUpto = await this.store.snapshots.prune(this.tenant, this.config.snapshotsKept, windowStartMs, startsLogLine)
      await this.store.prune(this.tenant, logNotNeededUpto, windowStartMs)
      this.lastSnapshotAt = at
      return { seq, file, bytes, durationMs: performance.now() - started }
    })().finally(() => {
      this.snapshotRunning = null
    })
    return this.snapshotRunning
  }

  /**
   * Replaces the whole state (online restore) by one just written as a snapshot at `state.seq`, taken at
   * `snapshotAt`: nothing is logged since it. The caller holds the tenant exclusively.
   */
  replaceState(state: TenantState, snapshotAt: number): void {
    assert(this.busy !== null, 'replaceState outside an exclusive job')
    this.state = state
    this.durableSeq = state.seq
    this.failedFromSeq = null
    this.entriesSinceSnapshot = 0
    this.logBytesSinceSnapshot = 0
    this.lastSnapshotAt = snapshotAt
  }

  private noteLogged(bytes: number): void {
    this.entriesSinceSnapshot += 1
    this.logBytesSinceSnapshot += bytes
    const due =
      this.entriesSinceSnapshot >= this.config.snapshotEveryCommands || this.logBytesSinceSnapshot >= this.config.snapshotEveryLogBytes
    if (due && this.snapshotRunning === null) {
      setImmediate(() => {
        if (this.resting) return
        this.snapshot().catch((error: unknown) => console.error(`snapshot of tenant '${this.tenant}' failed:`, error))
      })
    }
  }

  /** While the log store is full, writes are refused before they are decided, and this tenant's log is reclaimed. */
  private refuseWhileFull(): void {
    if (this.store.space.isFull()) this.refuseFull()
  }

  private refuseFull(): never {
    if (this.state.seq > 0) reclaimLogSpace(this, this.state.seq, this.store, this.config.reclaimMinIntervalMs)
    throw new StoreFull(this.store.space.limitBytes)
  }

  /**
   * Bytes a write stores beside its log entry (an upload's: WriteTx.storeBeside) must fit under the store's ceiling:
   * FileTooLarge (412) when they never could (the file alone fills it), else StoreFull as for a full store while they do not now.
   */
  private refuseUnlessRoomFor(bytes: number): void {
    const { space } = this.store
    if (space.limitBytes > 0 && bytes >= space.limitBytes) {
      throw new FileTooLarge(bytes, space.limitBytes)
    }
    if (!space.hasRoomFor(bytes)) this.refuseFull()
  }

  private refuseWhileFailed(): void {
    if (this.failedFromSeq !== null) throw new WritesUnavailable()
  }

  private fail(seq: number, error: unknown): void {
    if (this.failedFromSeq !== null && this.failedFromSeq <= seq) return
    this.failedFromSeq = seq
    console.error(`tenant '${this.tenant}': log append of entry ${seq} failed, reloading from disk:`, error instanceof Error ? error.message : error)
    void this.exclusive(async () => {
      await this.store.flushed().catch(() => undefined)
      await this.store.truncateAfter(this.tenant, seq - 1).catch(() => undefined)
      const { state, report } = recoverTenant(this.tenant, this.config.dataDir, this.store)
      this.state = state
      this.durableSeq = state.seq
      this.lastRecovery = report
      this.failedFromSeq = null
    })
  }
}
