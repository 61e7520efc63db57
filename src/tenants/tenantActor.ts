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
 * answers inside the HTTP handler that received it (maybePromise.ts). A
 * long read (scan, sort, summary, report) runs in slices (slicedRead.ts):
 * from the end of its first slice to its last the actor holds the tenant,
 * so it answers one state while the other tenants go on between slices.
 *
 * Exclusive jobs. Loading, a batch, a write in slices (an import:
 * slicedWrite.ts), an online restore, a rename and an eviction need the
 * tenant to themselves across awaits; they run one at a
 * time and whoever comes meanwhile waits in the mailbox (mailbox.ts), which
 * refuses a request past TENANT_MAILBOX_MAX_REQUESTS waiting (503).
 *
 * Phases (tenantPhase.ts): serving, resting, loading, failed, released,
 * moved, each holding only what is valid in it; the moves between them are
 * the actor's lifecycle (actorLifecycle.ts). A resting tenant is loaded
 * explicitly by its next caller: a request wakes it a slice per turn (wake;
 * a request in flight that holds the actor waits for it), an operator tool
 * loads it at once (loadAtOnce). A released or moved actor refuses all.
 *
 * The actor itself is the write funnel; its other duties are pieces of
 * their own, each with its comment: durabilityBarrier.ts (which applied
 * entries are on disk; the append of each), reloadAfterFailure.ts (after a
 * failed append: truncate, reload; nothing from that entry on is
 * acknowledged), snapshotSchedule.ts (when to snapshot, pruning after it),
 * spaceGuard.ts (writes against the store's ceiling).
 *
 * One path for a write: decide on a WriteTx (the route's closure) → applied
 * to the state as it goes → the global indexes learn what it did
 * (globalIndexes.ts) and the bytes it stores beside the log are put
 * (besideWrites.ts) → one log entry appended (group commit), in the same
 * store commit → flushed → the caller's answer.
 */
import type { Config } from '../config.js'
import { assert } from '../assert.js'
import type { MaybePromise } from '../maybePromise.js'
import type { Storage } from '../persist/ports.js'
import { ActorLifecycle } from './actorLifecycle.js'
import { recoverTenant, recoverTenantInTurns, type Recovered, type RecoveryReport } from './recovery.js'
import { ChangeFeed } from './changeFeed.js'
import { DurabilityBarrier } from './durabilityBarrier.js'
import { storeBesideWrites } from './besideWrites.js'
import { indexGlobals } from './globalIndexes.js'
import { HeavyReadBudget } from './heavyReadBudget.js'
import { LOG_ENTRY_FORMAT, type LogEntry } from '../engine/logEntry.js'
import { Mailbox, type Waiter } from './mailbox.js'
import { reloadAfterFailedAppend } from './reloadAfterFailure.js'
import { SlicedRead } from './slicedRead.js'
import { decideInSlices } from './slicedWrite.js'
import { SnapshotSchedule, type SnapshotResult } from './snapshotSchedule.js'
import { SpaceGuard } from './spaceGuard.js'
import { WritesUnavailable } from './tenantErrors.js'
import { failedFromSeq } from './tenantPhase.js'
import type { Steps } from '../engine/steps.js'
import { TenantState } from '../engine/tenantState.js'
import { WriteTx } from '../engine/writeTx.js'

/**
 * What the tenant does after an append failed (durabilityBarrier.ts): by default it reloads from the log
 * (reloadAfterFailure.ts); in cluster mode the registry drops it instead (tenantRegistry.ts).
 */
export type AppendFailurePolicy = (actor: TenantActor, seq: number, error: unknown) => void

export class TenantActor {
  /** Where the tenant is in its life, and the moves between phases (actorLifecycle.ts). */
  private readonly life: ActorLifecycle
  private readonly mailbox: Mailbox
  private readonly barrier: DurabilityBarrier
  private readonly snapshots: SnapshotSchedule
  private readonly space: SpaceGuard
  lastRecovery: RecoveryReport
  /** When a request last asked for this tenant (idle eviction, least recently used). */
  lastUsedMs = Date.now()
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
    this.mailbox = new Mailbox(tenant, config.tenantMailboxMaxRequests)
    this.changes = new ChangeFeed(tenant, store, state.seq, () => this.state)
    const afterFailure: AppendFailurePolicy = appendFailure ?? ((actor, seq, error) => reloadAfterFailedAppend(actor, store, seq, error))
    this.barrier = new DurabilityBarrier(
      store,
      tenant,
      state.seq,
      (bytes) => this.snapshots.noteLogged(bytes),
      (seq, error) => {
        this.life.appendFailed(seq)
        afterFailure(this, seq, error)
      },
      () => failedFromSeq(this.life.phase),
      (seq, entry) => this.changes.durable(seq, entry),
    )
    this.lastRecovery = report
    this.snapshots = new SnapshotSchedule(this, config, store)
    this.snapshots.restart(report.replayedEntries)
    this.space = new SpaceGuard(this, store, config.reclaimMinIntervalMs)
    this.heavyReads = new HeavyReadBudget(config.tenantHeavyReadMsPerS)
    const { mailbox, barrier, changes, snapshots } = this
    this.life = new ActorLifecycle({ tenant, store, mailbox, barrier, changes, snapshots, recovered: (recovered) => (this.lastRecovery = recovered) }, state)
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

  /** The state while in memory (serving, failed); TenantMoved, TenantRenamed once it left; at rest a bug (load it first). */
  get state(): TenantState {
    return this.life.state
  }

  /** Whether the state is not in memory here: at rest or loading, or for good (released, moved). */
  get resting(): boolean {
    return this.life.resting
  }

  /** Callers waiting for an exclusive job to finish (the mailbox depth). */
  get waiting(): number {
    return this.mailbox.waiting
  }

  /** Longest slice of a long read (READ_SLICE_MS). */
  get sliceMs(): number {
    return this.config.readSliceMs
  }

  get logEntriesSinceSnapshot(): number {
    return this.snapshots.entriesSinceSnapshot
  }

  /** Whether a snapshot holds the state as it is (none running, nothing logged since the last one: snapshotSchedule.ts). */
  get snapshotUpToDate(): boolean {
    return this.snapshots.upToDate
  }

  /** When the last snapshot was taken; null when none was since start. */
  get lastSnapshotAt(): number | null {
    return this.snapshots.lastSnapshotAt
  }

  /** Loads a resting tenant a slice per turn, as an exclusive job (actorLifecycle.ts). */
  wake(): Promise<void> {
    return this.life.wake()
  }

  /** Loads a resting (or loading) tenant at once, holding up every tenant: operator tools (TenantRegistry.get), tests. */
  loadAtOnce(): TenantState {
    return this.life.loadAtOnce()
  }

  /** Drops the state from memory (the caller holds the tenant exclusively, and everything logged is durable). */
  hibernate(onWake: () => void): void {
    this.life.hibernate(onWake)
  }

  /** Takes the state recovered after a failed append (reloadAfterFailure.ts); writes are accepted again. */
  reloadedAfterFailure(recovered: Recovered): void {
    this.life.reloadedAfterFailure(recovered)
  }

  /** Cluster mode: this node stops serving the tenant; its state goes at once (actorLifecycle.ts). */
  release(): void {
    this.life.release()
  }

  /** Ends this actor after its tenant moved to another name (tenantRename.ts; actorLifecycle.ts). */
  retire(): void {
    this.life.retire()
  }

  /**
   * Runs a synchronous read and releases its answer once everything it could see is durable: at once (not through
   * a promise) when the tenant is idle and all of it already is (maybePromise.ts).
   */
  read<T>(query: (state: TenantState) => T): MaybePromise<T> {
    const state = this.life.stateNow()
    if (state === null) return this.life.towardsServing('request').then(() => this.read(query))
    return this.onceDurable(state.seq, query(state))
  }

  /** `value` once every entry up to `seq` is durable: at once when it is already. */
  private onceDurable<T>(seq: number, value: T): MaybePromise<T> {
    return seq <= this.barrier.durableSeq ? value : this.durable(seq).then(() => value)
  }

  /**
   * Runs a read written as steps in slices (see the top): its answer at once when it ends in its first slice and
   * all it saw is durable; else the tenant is held until its last slice, and the answer released once durable.
   */
  readInSlices<T>(query: (state: TenantState) => Steps<T>): MaybePromise<T> {
    const state = this.life.stateNow()
    if (state === null) return this.life.towardsServing('request').then(() => this.readInSlices(query))
    const read = new SlicedRead(query(state), this.heavyReads, this.sliceMs)
    if (read.first()) return this.onceDurable(state.seq, read.value)
    let seq = 0
    return this.mailbox
      .hold(async () => {
        const value = await read.rest()
        seq = this.state.seq
        return value
      })
      .then((value) => this.onceDurable(seq, value))
  }

  /** Runs a synchronous read of the current state, durable or not (see TenantAccess.inspect); at once when idle. */
  inspect<T>(query: (state: TenantState) => T): MaybePromise<T> {
    const state = this.life.stateNow()
    if (state === null) return this.life.towardsServing('request').then(() => this.inspect(query))
    return query(state)
  }

  /** Decides and applies a write, logs it, and resolves once it is on disk. */
  async write<T>(decide: (tx: WriteTx) => T): Promise<T> {
    while (this.life.stateNow() === null) await this.life.towardsServing('request')
    return this.writeNow(decide)
  }

  /** A write for a caller that already holds the tenant (inside an exclusive job), or creates it. */
  async writeNow<T>(decide: (tx: WriteTx) => T): Promise<T> {
    const tx = this.openWrite()
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

  /**
   * A write too long for one event-loop turn (an import), written as steps: decided a slice at a time on one WriteTx
   * while the tenant is held (its requests wait; the other tenants go on between the slices: slicedWrite.ts), then
   * logged as ONE entry like any write. A step that throws rolls the whole write back (in slices too).
   */
  async writeInSlices<T>(decide: (tx: WriteTx) => Steps<T>): Promise<T> {
    return this.exclusive(async () => {
      const tx = this.openWrite()
      const result = await decideInSlices(tx, 0, decide(tx), this.sliceMs)
      await this.commit(tx)
      return result
    }, 'request')
  }

  /** A transaction on the serving state, refused while writes are unavailable (a failed append) or the store is full. */
  private openWrite(): WriteTx {
    if (this.life.phase.kind === 'failed') throw new WritesUnavailable()
    const state = this.state
    this.space.refuseWhileFull()
    return new WriteTx(state, Date.now(), this.space.refuseUnlessRoomFor)
  }

  /** Logs what a WriteTx applied (nothing when it applied nothing) and waits for it to be durable. */
  async commit(tx: WriteTx): Promise<void> {
    const state = this.state
    assert(tx.state === state, "a transaction is committed to a state that is not the tenant's")
    if (tx.ops.length === 0) {
      assert(tx.beside.length === 0, 'a write stores bytes beside a log entry it does not make')
      return this.durable(state.seq)
    }
    if (this.space.isFull()) {
      // A batch decides before it commits: undo what it applied, so memory holds nothing the log did not take.
      tx.rollback()
      this.space.refuseFull()
    }
    const seq = state.seq + 1
    const entry: LogEntry = { v: LOG_ENTRY_FORMAT, at: tx.now, ops: tx.ops, by: tx.by }
    try {
      indexGlobals(this.store, this.tenant, tx)
      storeBesideWrites(this.store.files, this.tenant, tx.beside)
    } catch (error) {
      // Nothing went to the log: memory goes back to what the log holds.
      tx.rollback()
      throw error
    }
    state.seq = seq
    this.store.space.noteWritten(tx.storedBytes)
    return this.barrier.append(seq, entry)
  }

  /**
   * Runs a job that needs the tenant to itself across awaits, once it is in memory and free. A request (a batch) is
   * refused when the mailbox is full; the tenant layer's own jobs never are (mailbox.ts).
   */
  async exclusive<T>(job: () => Promise<T>, who: Waiter = 'tenant'): Promise<T> {
    while (this.life.stateNow() === null) await this.life.towardsServing(who)
    return this.mailbox.hold(job)
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
   * `snapshotAt`: nothing is logged since it. The caller holds the tenant exclusively. A resting tenant wakes with
   * it; one released or moved meanwhile keeps nothing (its next owner loads the snapshot).
   */
  replaceState(state: TenantState, snapshotAt: number): void {
    this.life.replaceState(state, snapshotAt)
  }
}
