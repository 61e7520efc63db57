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
 * no response shows state that a crash could take back (ARCHITECTURE.md §2.3).
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
 * Renaming. A tenant moved to another name (tenantRename.ts) leaves its
 * actor retired: what waited for the move, and any later write given this
 * actor, is refused as TenantRenamed.
 *
 * Rest. An idle tenant may be put to rest (hibernate(), inside an exclusive
 * job, after its snapshot): its state is dropped and reloaded from disk the
 * moment anything touches `state` again, so a reference held by a request
 * in flight stays valid. Callers waiting for an exclusive job are counted
 * (`waiting`, the mailbox depth).
 *
 * Release (cluster mode). A tenant this node stops serving (lease lost or
 * given back) is released: its state is dropped and never reloaded here,
 * since another node may write to it from now on; whatever still holds the
 * actor gets TenantMoved, and a retry reaches the tenant's new owner.
 *
 * The actor itself is the mailbox and the write funnel; its other duties
 * are pieces of their own, each with its comment:
 *
 *   durabilityBarrier.ts   which applied entries are on disk; the append of
 *                          each entry to the tenant log (persist/ports.ts)
 *   reloadAfterFailure.ts  after a failed append: truncate, reload from disk
 *                          (nothing from that entry on is acknowledged:
 *                          WritesUnavailable, and callers may retry)
 *   snapshotSchedule.ts    when to snapshot, the snapshot, pruning after it
 *   spaceGuard.ts          writes against the store's ceiling (StoreFull,
 *                          FileTooLarge) and reclaiming the log's space
 *
 * One path for a write: decide on a WriteTx (the route's closure) → applied
 * to the state as it goes → the global indexes learn what it did
 * (globalIndexes.ts) → one log entry appended (group commit) → flushed →
 * the caller's answer.
 */
import type { Config } from '../config.js'
import { assert } from '../assert.js'
import type { MaybePromise } from '../maybePromise.js'
import type { Storage } from '../persist/ports.js'
import { recoverTenant, recoverTenantInTurns, type Recovered, type RecoveryReport } from './recovery.js'
import { ChangeFeed } from './changeFeed.js'
import { DurabilityBarrier } from './durabilityBarrier.js'
import { indexGlobals } from './globalIndexes.js'
import { HeavyReadBudget } from './heavyReadBudget.js'
import { LOG_ENTRY_FORMAT, type LogEntry } from '../engine/logEntry.js'
import { reloadAfterFailedAppend } from './reloadAfterFailure.js'
import { SlicedRead } from './slicedRead.js'
import { SnapshotSchedule, type SnapshotResult } from './snapshotSchedule.js'
import { SpaceGuard } from './spaceGuard.js'
import { TenantMoved } from './tenantErrors.js'
import type { Steps } from '../engine/steps.js'
import { TenantState } from '../engine/tenantState.js'
import { TenantRenamed } from './tenantErrors.js'
import { WriteTx } from '../engine/writeTx.js'

/**
 * What the tenant does after an append failed (durabilityBarrier.ts): by default it reloads from the log
 * (reloadAfterFailure.ts); in cluster mode the registry drops it instead (tenantRegistry.ts).
 */
export type AppendFailurePolicy = (actor: TenantActor, seq: number, error: unknown) => void

export class TenantActor {
  /** The state in memory; null while the tenant rests. */
  private loaded: TenantState | null = null
  /** Cluster mode: this node no longer serves the tenant; nothing reloads the state here any more. */
  private released = false
  private busy: Promise<void> | null = null
  private readonly barrier: DurabilityBarrier
  private readonly snapshots: SnapshotSchedule
  private readonly space: SpaceGuard
  lastRecovery: RecoveryReport
  /** Callers waiting for an exclusive job to finish (the mailbox depth). */
  waiting = 0
  /** When a request last asked for this tenant (idle eviction, least recently used). */
  lastUsedMs = Date.now()
  /** Told when a resting tenant is loaded again. */
  private onWake: (() => void) | null = null
  /** Set when the tenant moved to another name (retire()): what still waits here is refused. */
  private moved = false
  /** The CPU budget of this tenant's heavy reads (heavyReadBudget.ts, slicedRead.ts). */
  readonly heavyReads: HeavyReadBudget
  /** The durable entries' changes, for the change feed's subscribers and the webhooks (changeFeed.ts). */
  readonly changes: ChangeFeed

  private constructor(
    readonly tenant: string,
    private readonly config: Config,
    private readonly store: Storage,
    state: TenantState,
    report: RecoveryReport,
    appendFailure: AppendFailurePolicy | undefined,
  ) {
    this.state = state
    this.changes = new ChangeFeed(tenant, store, state.seq, () => this.state)
    this.barrier = new DurabilityBarrier(
      store,
      tenant,
      state.seq,
      (bytes) => this.snapshots.noteLogged(bytes),
      appendFailure === undefined ? (seq, error) => reloadAfterFailedAppend(this, store, seq, error) : (seq, error) => appendFailure(this, seq, error),
      (seq, entry) => this.changes.durable(seq, entry),
    )
    this.lastRecovery = report
    this.snapshots = new SnapshotSchedule(this, config, store)
    this.snapshots.restart(report.replayedEntries)
    this.space = new SpaceGuard(this, store, config.reclaimMinIntervalMs)
    this.heavyReads = new HeavyReadBudget(config.tenantHeavyReadMsPerS)
  }

  /** Activates an existing tenant: its newest valid snapshot plus the log after it. */
  static recover(tenant: string, config: Config, store: Storage, onReplay?: (entriesDone: number) => void): TenantActor {
    const { state, report } = recoverTenant(tenant, store, { onProgress: onReplay })
    return new TenantActor(tenant, config, store, state, report, undefined)
  }

  /** recover, a slice per event-loop turn: a server activating a large tenant keeps serving the others. */
  static async recoverInTurns(tenant: string, config: Config, store: Storage, appendFailure?: AppendFailurePolicy): Promise<TenantActor> {
    const { state, report } = await recoverTenantInTurns(tenant, store)
    return new TenantActor(tenant, config, store, state, report, appendFailure)
  }

  /** A tenant that is being created: empty state, nothing logged yet. */
  static fresh(tenant: string, config: Config, store: Storage, appendFailure?: AppendFailurePolicy): TenantActor {
    const report: RecoveryReport = { snapshotSeq: 0, snapshotFile: null, replayedEntries: 0, skippedSnapshots: [], durationMs: 0 }
    return new TenantActor(tenant, config, store, new TenantState(tenant), report, appendFailure)
  }

  /**
   * The tenant's state; a resting tenant is reloaded from disk (its newest snapshot and the log after it) at once,
   * holding up every tenant meanwhile: requests wake it with `wake` first.
   */
  get state(): TenantState {
    if (this.loaded !== null) return this.loaded
    if (this.released) throw new TenantMoved(this.tenant)
    return this.reloaded(recoverTenant(this.tenant, this.store))
  }

  /**
   * Reloads a resting tenant a slice per event-loop turn, as an exclusive job (its requests wait in the mailbox).
   * Should something touch `state` meanwhile (reloading it at once), that state is kept: writes may have gone to it.
   */
  async wake(): Promise<void> {
    if (this.loaded !== null) return
    if (this.released) throw new TenantMoved(this.tenant)
    await this.exclusive(async () => {
      if (this.loaded !== null) return
      const recovered = await recoverTenantInTurns(this.tenant, this.store)
      if (this.loaded === null) this.reloaded(recovered)
    })
  }

  private reloaded({ state, report }: Recovered): TenantState {
    this.lastRecovery = report
    this.snapshots.restart(report.replayedEntries)
    this.state = state
    return state
  }

  /** Takes the state recovered after a failed append (reloadAfterFailure.ts); writes are accepted again. */
  reloadedAfterFailure({ state, report }: Recovered): void {
    this.state = state
    this.barrier.reset(state.seq)
    this.changes.rewind(state.seq)
    this.lastRecovery = report
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
    return this.snapshots.entriesSinceSnapshot
  }

  /** When the last snapshot was taken; null when none was since start. */
  get lastSnapshotAt(): number | null {
    return this.snapshots.lastSnapshotAt
  }

  /** Drops the state from memory (the caller holds the tenant exclusively, and everything logged is durable). */
  hibernate(onWake: () => void): void {
    assert(this.busy !== null, 'hibernate outside an exclusive job')
    assert(this.barrier.durableSeq >= (this.loaded?.seq ?? 0), 'hibernate with entries not yet durable')
    this.loaded = null
    this.onWake = onWake
  }

  /**
   * Cluster mode: this node stops serving the tenant (see the top). Its state goes at once, whatever runs: a lost
   * lease means another node may write already, and a write still under way here is fenced by the log.
   */
  release(): void {
    this.released = true
    this.loaded = null
    this.onWake = null
    this.changes.endAll('moved')
  }

  private async waitTurn(): Promise<void> {
    this.waiting += 1
    try {
      await this.busy
    } finally {
      this.waiting -= 1
    }
    if (this.moved) throw new TenantRenamed(this.tenant)
  }

  /**
   * Ends this actor after its tenant moved to another name (tenantRename.ts, inside an exclusive job): the requests
   * that waited for the job, and any write still given this actor, are refused (TenantRenamed); nothing more is logged
   * under the old name.
   */
  retire(): void {
    assert(this.busy !== null, 'retire outside an exclusive job')
    this.moved = true
    this.changes.endAll('moved')
  }

  /**
   * Runs a synchronous read and releases its answer once everything it could see is durable: at once (not through
   * a promise) when the tenant is idle and all of it already is (maybePromise.ts).
   */
  read<T>(query: (state: TenantState) => T): MaybePromise<T> {
    if (this.busy !== null) return this.waitTurn().then(() => this.read(query))
    const result = query(this.state)
    const seq = this.state.seq
    return seq <= this.barrier.durableSeq ? result : this.durable(seq).then(() => result)
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
      return seq <= this.barrier.durableSeq ? read.value : this.durable(seq).then(() => read.value)
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
    if (this.moved) throw new TenantRenamed(this.tenant)
    this.barrier.refuseWhileFailed()
    this.space.refuseWhileFull()
    const tx = new WriteTx(this.state, Date.now(), this.space.refuseUnlessRoomFor)
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
    if (this.space.isFull()) {
      // A batch decides before it commits: undo what it applied, so memory holds nothing the log did not take.
      tx.rollback()
      this.space.refuseFull()
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
    return this.barrier.append(seq, entry)
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
  durable(seq: number): Promise<void> {
    return this.barrier.durable(seq)
  }

  /**
   * Writes a snapshot of the current state (once the log under it is durable) and prunes the snapshots and log
   * entries that no restore within LOG_RETENTION_MS needs (snapshotSchedule.ts). `onProgress` hears the records written so far.
   */
  snapshot(onProgress?: (recordsDone: number) => void): Promise<SnapshotResult> {
    return this.snapshots.snapshot(onProgress)
  }

  /**
   * Replaces the whole state (online restore) by one just written as a snapshot at `state.seq`, taken at
   * `snapshotAt`: nothing is logged since it. The caller holds the tenant exclusively.
   */
  replaceState(state: TenantState, snapshotAt: number): void {
    assert(this.busy !== null, 'replaceState outside an exclusive job')
    this.state = state
    this.barrier.reset(state.seq)
    this.changes.reset(state.seq)
    this.snapshots.restart(0)
    this.snapshots.lastSnapshotAt = snapshotAt
  }
}
