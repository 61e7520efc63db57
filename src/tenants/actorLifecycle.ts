/*
 * The life of a tenant actor (tenantActor.ts): its phase (tenantPhase.ts)
 * and every move from one phase to another, each one call of `enter`,
 * which asserts it is one of the arrows. The actor decides and logs
 * writes and answers reads; this decides when there is a state to do it
 * on, and what a move does to the actor's other pieces:
 *
 *   loading      a resting tenant is loaded explicitly by its next caller
 *                (towardsServing): a request wakes it a slice per turn as an
 *                exclusive job (wake), an operator tool loads it at once
 *                (loadAtOnce); either restarts the snapshot count and tells
 *                whoever put it to rest (onWake).
 *   resting      hibernate drops the state inside an exclusive job, once
 *                everything logged is durable.
 *   failed       an append failed (durabilityBarrier.ts): nothing from it on
 *                is acknowledged until the reload (reloadAfterFailure.ts)
 *                hands a state again (reloadedAfterFailure), which rewinds
 *                the barrier and the change feed to it.
 *   leaving      release (cluster mode: the lease is gone) and retire (a
 *                rename) end the change feed's subscriptions; the actor
 *                refuses everything from then on.
 *   replacing    an online restore's state replaces the whole state
 *                (replaceState): barrier, change feed and snapshot count
 *                start again from it.
 */
import { assert, assertionFailed } from '../assert.js'
import type { TenantState } from '../engine/tenantState.js'
import type { Storage } from '../persist/ports.js'
import type { ChangeFeed } from './changeFeed.js'
import type { DurabilityBarrier } from './durabilityBarrier.js'
import type { Mailbox, Waiter } from './mailbox.js'
import { recoverTenant, recoverTenantInTurns, type Recovered, type RecoveryReport } from './recovery.js'
import type { SnapshotSchedule } from './snapshotSchedule.js'
import { TenantMoved, TenantRenamed } from './tenantErrors.js'
import { afterFailedAppend, failedFromSeq, isTransition, stateOf, type TenantPhase } from './tenantPhase.js'

/** The actor's pieces a move between phases touches. */
export interface LifecycleParts {
  readonly tenant: string
  readonly store: Storage
  readonly mailbox: Mailbox
  readonly barrier: DurabilityBarrier
  readonly changes: ChangeFeed
  readonly snapshots: SnapshotSchedule
  /** Hears the report of each load that gave the state now in memory (TenantActor.lastRecovery). */
  recovered(report: RecoveryReport): void
}

export class ActorLifecycle {
  /** Where the tenant is in its life (tenantPhase.ts); only the transitions below change it. */
  private current: TenantPhase

  constructor(
    private readonly parts: LifecycleParts,
    state: TenantState,
  ) {
    this.current = { kind: 'serving', state }
  }

  get phase(): TenantPhase {
    return this.current
  }

  /** Changes the phase; only along the arrows of tenantPhase.ts. */
  private enter(next: TenantPhase): void {
    if (!isTransition(this.current.kind, next.kind)) assertionFailed(`tenant '${this.parts.tenant}' cannot go from ${this.current.kind} to ${next.kind}`)
    this.current = next
  }

  /** The state while in memory (serving, failed); TenantMoved, TenantRenamed once it left; at rest a bug (load it first). */
  get state(): TenantState {
    const phase = this.current
    const state = stateOf(phase)
    if (state !== null) return state
    if (phase.kind === 'released') throw new TenantMoved(this.parts.tenant)
    if (phase.kind === 'moved') throw new TenantRenamed(this.parts.tenant)
    return assertionFailed(`the state of tenant '${this.parts.tenant}' is touched while ${phase.kind}: it is loaded first (wake, loadAtOnce)`)
  }

  /** Whether the state is not in memory here: at rest or loading, or for good (released, moved). */
  get resting(): boolean {
    return stateOf(this.current) === null
  }

  /** The state when a caller may use it at once: in memory, and no job holds the tenant; null otherwise. */
  stateNow(): TenantState | null {
    return this.parts.mailbox.held ? null : stateOf(this.current)
  }

  /** One step towards stateNow(): waits for the job holding the tenant, or loads a resting one; refuses one that left. */
  async towardsServing(who: Waiter): Promise<void> {
    if (this.parts.mailbox.held) return this.parts.mailbox.waitTurn(who)
    const { kind } = this.current
    if (kind === 'resting') return this.wake()
    if (kind === 'released' || kind === 'moved') return void this.state // refused: TenantMoved, TenantRenamed
    assertionFailed(`tenant '${this.parts.tenant}' is ${kind}, and free: nothing to wait for`)
  }

  /** Loads a resting tenant a slice per turn, as an exclusive job; one loaded at once meanwhile keeps that state (written to). */
  async wake(): Promise<void> {
    const { mailbox } = this.parts
    while (mailbox.held) await mailbox.waitTurn('tenant')
    const resting = this.current
    if (resting.kind !== 'resting') return void this.state // loaded meanwhile; or refused once it left
    await mailbox.hold(async () => {
      this.enter({ kind: 'loading', onWake: resting.onWake })
      let recovered: Recovered
      try {
        recovered = await recoverTenantInTurns(this.parts.tenant, this.parts.store)
      } catch (error) {
        if (this.current.kind === 'loading') this.enter(resting)
        throw error
      }
      if (this.current.kind === 'loading') this.loaded(recovered)
    })
    assert(this.current.kind !== 'resting' && this.current.kind !== 'loading', 'a tenant woke without its state')
  }

  /** Loads a resting (or loading) tenant at once, holding up every tenant: operator tools (TenantRegistry.get), tests. */
  loadAtOnce(): TenantState {
    const { kind } = this.current
    if (kind !== 'resting' && kind !== 'loading') return this.state
    return this.loaded(recoverTenant(this.parts.tenant, this.parts.store))
  }

  private loaded({ state, report }: Recovered): TenantState {
    const phase = this.current
    assert(phase.kind === 'resting' || phase.kind === 'loading', `a tenant is loaded while ${phase.kind}`)
    assert(state.seq === this.parts.barrier.durableSeq, 'a tenant is loaded without every entry it made durable')
    this.enter({ kind: 'serving', state })
    this.parts.recovered(report)
    this.parts.snapshots.restart(report.replayedEntries)
    phase.onWake()
    return state
  }

  /** Drops the state from memory (the caller holds the tenant exclusively, and everything logged is durable). */
  hibernate(onWake: () => void): void {
    const phase = this.current
    assert(this.parts.mailbox.held, 'hibernate outside an exclusive job')
    assert(phase.kind === 'serving' && this.parts.barrier.durableSeq >= phase.state.seq, 'hibernate of a tenant not serving, or with entries not yet durable')
    this.enter({ kind: 'resting', onWake })
  }

  /** An append failed (durabilityBarrier.ts): nothing from `seq` on is acknowledged. */
  appendFailed(seq: number): void {
    const failed = afterFailedAppend(this.current, seq)
    if (failed === null) assertionFailed(`tenant '${this.parts.tenant}': an append failed while ${this.current.kind}, when none can be in flight`)
    this.enter(failed)
  }

  /** Takes the state recovered after a failed append (reloadAfterFailure.ts); writes are accepted again. */
  reloadedAfterFailure({ state, report }: Recovered): void {
    const phase = this.current
    assert(this.parts.mailbox.held, 'a reload outside an exclusive job')
    // Released or moved meanwhile: nothing of the tenant is served here any more.
    if (phase.kind !== 'failed' && phase.kind !== 'serving') return
    this.enter({ kind: 'serving', state })
    this.parts.barrier.reset(state.seq)
    this.parts.changes.rewind(state.seq)
    this.parts.recovered(report)
  }

  /**
   * Cluster mode: this node stops serving the tenant (tenantPhase.ts). Its state goes at once, whatever runs: a lost
   * lease means another node may write already, and a write still under way here is fenced by the log.
   */
  release(): void {
    this.enter({ kind: 'released', failedFromSeq: failedFromSeq(this.current) })
    this.parts.changes.endAll('moved')
  }

  /**
   * Ends the actor after its tenant moved to another name (tenantRename.ts, inside an exclusive job, everything it
   * logged durable): the requests that waited for the job, and anything still given the actor, are refused
   * (TenantRenamed); nothing more is logged under the old name.
   */
  retire(): void {
    const phase = this.current
    assert(this.parts.mailbox.held, 'retire outside an exclusive job')
    assert(phase.kind === 'released' || (phase.kind === 'serving' && this.parts.barrier.durableSeq >= phase.state.seq), 'retire with entries not durable')
    this.enter({ kind: 'moved' })
    this.parts.changes.endAll('moved')
  }

  /**
   * Replaces the whole state (online restore) by one just written as a snapshot at `state.seq`, taken at
   * `snapshotAt`: nothing is logged since it. The caller holds the tenant exclusively. A resting tenant wakes with
   * it; one released or moved meanwhile keeps nothing (its next owner loads the snapshot).
   */
  replaceState(state: TenantState, snapshotAt: number): void {
    const phase = this.current
    assert(this.parts.mailbox.held && phase.kind !== 'loading', 'replaceState outside an exclusive job')
    if (phase.kind === 'released' || phase.kind === 'moved') return
    this.enter({ kind: 'serving', state })
    this.parts.barrier.reset(state.seq)
    this.parts.changes.reset(state.seq)
    this.parts.snapshots.restart(0)
    this.parts.snapshots.lastSnapshotAt = snapshotAt
    if (phase.kind === 'resting') phase.onWake()
  }
}
