/*
 * The tenants of this server: the tenant directory (tenantDirectory.ts)
 * says which exist; an actor is activated (recovered from the storage) on a
 * tenant's first request and kept in memory. Creating a tenant writes its
 * directory row and its first log entry in the same group commit.
 *
 * Placement (placement.ts, ARCHITECTURE.md §8) says which tenants are
 * this process's: activation acquires the tenant first (TenantElsewhere
 * when another node holds it: the router forwards), an active tenant is
 * served while the placement says so, one it lost is dropped at once, and a
 * name is claimed before a tenant is created. A tenant put to rest, whose
 * append failed, or created here is kept when the placement keeps its
 * tenants (embedded); else its actor is released and its lease given back.
 *
 * Eviction. evict() puts a tenant to rest as an exclusive job of its actor
 * (so no request or write runs meanwhile): it re-checks that nobody waits
 * (and, for the idle sweep, that the tenant is still idle), waits for the
 * log to be durable, snapshots when entries were logged since the last
 * snapshot, checks again, and drops the state (TenantActor.hibernate). The
 * actor itself is kept only through a WeakRef (restingActors.ts): a request
 * in flight that still holds it loads the state again on its next step and
 * the actor rejoins the active set; there is never a second live actor for
 * a tenant. The idle sweep (idleSweeper.ts) and MAX_ACTIVE_TENANTS
 * (activeTenantCap.ts) choose the tenants put to rest.
 *
 * Activation. Requests open a tenant with `open`, which loads it a slice
 * per event-loop turn (recoverTenantInTurns): loading a million time
 * records takes seconds, and done at once it would hold up every other
 * tenant for as long (ARCHITECTURE.md §2.4). Requests for the tenant
 * meanwhile wait for the same activation; a resting tenant wakes the same
 * way, as an exclusive job of its actor. `get` loads at once, for operator
 * tools and tests; it refuses a tenant whose activation is under way, so
 * there is never a second actor for a tenant, and shutdown waits for
 * activations. A tenant that cannot be recovered is closed
 * (closedTenants.ts). Whatever must run for every tenant in memory (the
 * webhooks' deliveries) hears of each tenant activated, created or woken
 * here (onActivated).
 *
 * Renaming. rename() moves a tenant to another name as an exclusive job of
 * its actor (tenantRename.ts), the new name reserved like a tenant being
 * created; the old actor leaves the active set and is retired.
 */
import type { Config } from '../config.js'
import { assert } from '../assert.js'
import { fitsTenantName } from '../domain/tenantName.js'
import type { MaybePromise } from '../maybePromise.js'
import type { ProgressFactory } from '../progress.js'
import type { Storage } from '../persist/ports.js'
import { ActiveTenantCap } from './activeTenantCap.js'
import { BesideTenants } from './besideTenants.js'
import { ClosedTenants } from './closedTenants.js'
import { EmbeddedPlacement, type Placed, type Placement } from './placement.js'
import { RestingActors } from './restingActors.js'
import { snapshotEvery } from './snapshotEvery.js'
import { TenantActor, type AppendFailurePolicy } from './tenantActor.js'
import { TenantDirectory } from './tenantDirectory.js'
import { PlacementUnavailable, ShuttingDown, TenantElsewhere, TenantLoading, TenantMoved, TenantNameTaken, TenantRenamed } from './tenantErrors.js'
import { installUnderNewName, nothingStoredUnder, removeOldName } from './tenantRename.js'
import type { WriteTx } from '../engine/writeTx.js'

export class TenantRegistry {
  /** Tenants with their state in memory. */
  private readonly actors = new Map<string, TenantActor>()
  /** Tenants put to rest, while their actor is still reachable from somewhere (restingActors.ts). */
  private readonly resting = new RestingActors()
  private readonly evicting = new Set<string>()
  /** Tenants put to rest since start. */
  evictions = 0
  private readonly creating = new Set<string>()
  /** Tenants whose storage is being removed after a rename: they exist for no one, and no one may take the name yet. */
  private readonly moving = new Set<string>()
  private closing = false
  /** MAX_ACTIVE_TENANTS (activeTenantCap.ts). */
  private readonly cap: ActiveTenantCap
  /** Activations and wakes under way (`open`), so that every request for the tenant waits for the same one. */
  private readonly activations = new Map<string, Promise<TenantActor | undefined>>()
  /** Tenants that could not be recovered: answered 503 without a new attempt until reopened. */
  readonly closed = new ClosedTenants()
  /** Told of every tenant whose state came into memory here (activated, created, woken): onActivated. */
  private readonly activationListeners: ((actor: TenantActor) => void)[] = []
  /** The tenants' rows (tenantDirectory.ts). */
  readonly directory: TenantDirectory
  /** What the routes read and write of the store beside the tenants' state (besideTenants.ts). */
  readonly beside: BesideTenants
  /** What an actor does after a failed append: reload from the log (the default), or be dropped (see the top). */
  private readonly appendFailure: AppendFailurePolicy | undefined

  constructor(
    readonly config: Config,
    readonly store: Storage,
    /** Which tenants this process serves (placement.ts): all of the directory's by default, a cluster's lease holder's. */
    readonly placement: Placement = new EmbeddedPlacement(store),
  ) {
    this.directory = new TenantDirectory(store, config.signUpConfirmationLifetimeMs)
    this.beside = new BesideTenants(store)
    this.cap = new ActiveTenantCap(config.maxActiveTenants, {
      stayingCount: () => this.actors.size - this.evicting.size,
      staying: () => [...this.actors.values()].filter((actor) => !this.evicting.has(actor.tenant)),
      evict: (tenant) => this.evict(tenant),
    })
    placement.onLost((tenant) => this.drop(tenant))
    this.appendFailure = placement.keepsTenants ? undefined : (actor, seq, error) => this.dropAfterFailedAppend(actor.tenant, seq, error)
  }

  /** Cluster mode's answer to a failed append (see the top). */
  private dropAfterFailedAppend(tenant: string, seq: number, error: unknown): void {
    console.error(`tenant '${tenant}': log append of entry ${seq} failed (${error instanceof Error ? error.message : String(error)}); the tenant is dropped here`)
    this.drop(tenant)
    void this.placement.release(tenant)
  }

  exists(tenant: string): boolean {
    return this.actors.has(tenant) || this.creating.has(tenant) || this.moving.has(tenant) || this.directory.has(tenant)
  }

  /** Every tenant in the directory. */
  names(): string[] {
    return this.directory.names()
  }

  /** ShuttingDown once close() began: no tenant is opened or created any more. */
  refuseWhileClosing(): void {
    if (this.closing) throw new ShuttingDown()
  }

  /** A tenant that is not active and cannot be activated now: renamed away, or closed as damaged. */
  private refuseUnopenable(tenant: string): void {
    if (this.moving.has(tenant)) throw new TenantRenamed(tenant)
    this.closed.refuse(tenant)
  }

  /**
   * The tenant's actor: at once when it is active (maybePromise.ts), else once it is activated, a slice per
   * event-loop turn (see the top); undefined for an unknown tenant; 503 for a damaged one.
   */
  open(tenant: string): MaybePromise<TenantActor | undefined> {
    if (!fitsTenantName(tenant)) return undefined
    const active = this.actors.get(tenant)
    if (active === undefined) return this.activate(tenant)
    if (!this.placement.serving(tenant)) {
      // The lease may have run out by this node's clock: another node may hold the tenant by now.
      this.drop(tenant)
      return this.activate(tenant)
    }
    active.lastUsedMs = Date.now()
    return active
  }

  /** open() of a tenant that is not active: joins its activation under way, or starts one. */
  private async activate(tenant: string): Promise<TenantActor | undefined> {
    const activation = this.activations.get(tenant)
    if (activation !== undefined) return activation
    this.refuseWhileClosing()
    this.refuseUnopenable(tenant)
    const resting = this.resting.get(tenant)
    if (resting === undefined) return this.activation(tenant, () => this.acquireAndRecover(tenant))
    resting.lastUsedMs = Date.now()
    return this.activation(tenant, async () => {
      await resting.wake()
      return resting
    })
  }

  /** Activates the tenant here once the placement says it is this process's; TenantElsewhere when another node holds it. */
  private async acquireAndRecover(tenant: string): Promise<TenantActor | undefined> {
    const { placement } = this
    let placed: Placed
    try {
      placed = await placement.acquire(tenant)
    } catch (error) {
      console.error(`tenant '${tenant}': its placement could not be asked:`, error instanceof Error ? error.message : error)
      throw new PlacementUnavailable(tenant)
    }
    if (placed.kind === 'unknown') return undefined
    if (placed.kind === 'elsewhere') throw new TenantElsewhere(tenant, placed.nodeId, placed.nodeUrl)
    let actor: TenantActor
    try {
      actor = await TenantActor.recoverInTurns(tenant, this.config, this.store, this.appendFailure)
    } catch (error) {
      void placement.release(tenant)
      throw error
    } finally {
      placement.recovered(tenant)
    }
    if (this.closing) {
      void placement.release(tenant)
      throw new ShuttingDown()
    }
    this.activated(tenant, actor)
    return actor
  }

  /** This process no longer serves the tenant (lease lost, or a failed append in cluster mode): its actor goes at once. */
  drop(tenant: string): void {
    const actor = this.actors.get(tenant)
    if (actor === undefined) return
    this.actors.delete(tenant)
    actor.release()
    assert(actor.resting && !this.actors.has(tenant), 'a dropped tenant is still served')
  }

  /** Runs `load` as the tenant's activation under way, which later requests share (and close waits for). */
  private activation<T extends TenantActor | undefined>(tenant: string, load: () => Promise<T>): Promise<T> {
    assert(!this.activations.has(tenant), 'a second activation of a tenant')
    const activating = this.closed.loadOrCloseInTurns(tenant, load).finally(() => this.activations.delete(tenant))
    this.activations.set(tenant, activating)
    return activating
  }

  /** The tenant's actor, activated on first use at once (operator tools, tests); undefined for an unknown tenant; 503 for a damaged one. */
  get(tenant: string): TenantActor | undefined {
    const active = this.actors.get(tenant)
    if (active !== undefined) {
      active.lastUsedMs = Date.now()
      return active
    }
    if (this.activations.has(tenant)) throw new TenantLoading(tenant)
    if (this.moving.has(tenant)) throw new TenantRenamed(tenant)
    // A node of a cluster activates a tenant only after claiming its lease, which waits for PostgreSQL: never at once.
    if (!this.placement.keepsTenants) throw new TenantMoved(tenant)
    this.closed.refuse(tenant)
    const resting = this.resting.get(tenant)
    if (resting !== undefined) {
      // Loading the state wakes the actor, which moves it back among the active ones.
      this.closed.loadOrClose(tenant, () => resting.loadAtOnce())
      resting.lastUsedMs = Date.now()
      return resting
    }
    if (!this.directory.has(tenant)) return undefined
    const actor = this.closed.loadOrClose(tenant, () => TenantActor.recover(tenant, this.config, this.store))
    this.activated(tenant, actor)
    return actor
  }

  /** Tenants with their state in memory. */
  active(): IterableIterator<TenantActor> {
    return this.actors.values()
  }

  get activeCount(): number {
    return this.actors.size
  }

  /**
   * Snapshots (when needed) and drops a tenant's state from memory, unless a request waits for it or, with
   * `idleForMs`, it was used more recently than that; true when it was put to rest. The next request loads it again.
   */
  async evict(tenant: string, idleForMs = 0): Promise<boolean> {
    const actor = this.actors.get(tenant)
    if (actor === undefined || this.evicting.has(tenant) || this.closing) return false
    this.evicting.add(tenant)
    try {
      return await actor.exclusive(async () => {
        // A tenant with change subscribers is in use, whatever the time since its last request.
        const idle = () => !this.closing && this.actors.get(tenant) === actor && actor.waiting === 0 && actor.changes.subscriberCount === 0 && Date.now() - actor.lastUsedMs >= idleForMs
        if (!idle()) return false
        await actor.durable(actor.state.seq)
        if (actor.logEntriesSinceSnapshot > 0) await actor.snapshot()
        // A snapshot that was already running when the eviction began may not hold the newest entries.
        if (actor.logEntriesSinceSnapshot > 0) await actor.snapshot()
        if (!idle()) return false
        this.actors.delete(tenant)
        this.evictions += 1
        if (this.placement.keepsTenants) {
          this.resting.add(tenant, actor)
          actor.hibernate(() => this.woke(tenant, actor))
        } else {
          // Another node may take the tenant from now on: this actor's state would go stale, so it is not kept.
          actor.release()
          await this.placement.release(tenant)
        }
        assert(actor.resting, 'an evicted tenant kept its state')
        return true
      })
    } finally {
      this.evicting.delete(tenant)
    }
  }

  private activated(tenant: string, actor: TenantActor): void {
    assert(!actor.resting && this.actors.get(tenant) === undefined, 'a tenant activated without its state, or twice')
    this.actors.set(tenant, actor)
    this.cap.enforce(actor)
    for (const listener of this.activationListeners) {
      try {
        listener(actor)
      } catch (error) {
        console.error(`tenant '${tenant}': an activation listener failed:`, error)
      }
    }
  }

  /** Tells `listener` of every tenant activated, created or woken here from now on (the webhooks' deliverer). */
  onActivated(listener: (actor: TenantActor) => void): void {
    this.activationListeners.push(listener)
  }

  private woke(tenant: string, actor: TenantActor): void {
    this.resting.woke(tenant, actor)
    this.activated(tenant, actor)
  }

  /** Creates a tenant whose first log entry is what `decide` writes; resolves when durable. */
  async create<T>(tenant: string, decide: (tx: WriteTx) => T, info: { unconfirmed?: boolean } = {}): Promise<T> {
    this.refuseWhileClosing()
    if (this.exists(tenant)) throw new TenantNameTaken(tenant)
    this.creating.add(tenant)
    try {
      if (!(await this.placement.claimNew(tenant))) throw new TenantNameTaken(tenant)
      const actor = TenantActor.fresh(tenant, this.config, this.store, this.appendFailure)
      // The directory row is issued in the same turn as the first entry, so both share one commit.
      const written = actor.writeNow((tx) => {
        const decided = decide(tx)
        this.directory.found(tenant, tx.now, info.unconfirmed === true)
        return decided
      })
      if (this.placement.keepsTenants) {
        const result = await written
        this.activated(tenant, actor)
        return result
      }
      // Cluster mode: not kept, created or not. A sign-up is a public call, which HAProxy routes without the tenant's host;
      // the tenant's own requests are routed by its host, and the first claims it on the node where it lands.
      try {
        return await written
      } finally {
        actor.release()
        await this.placement.release(tenant)
      }
    } finally {
      this.creating.delete(tenant)
    }
  }

  /**
   * Moves the tenant `from` to the name `to` (tenantRename.ts) as an exclusive job of its actor, `decide` running as
   * a write on the moved state; TenantNameTaken when `to` exists, is being created, or has anything stored.
   */
  async rename<T>(from: string, to: string, decide: (tx: WriteTx) => T): Promise<T> {
    this.refuseWhileClosing()
    if (this.exists(to)) throw new TenantNameTaken(to)
    const actor = await this.open(from)
    const info = this.directory.row(from)
    if (actor === undefined || info === undefined) throw new TenantRenamed(from)
    this.creating.add(to)
    let installed = false
    try {
      // The new name's lease first (cluster mode), as for a tenant being created; the old one is given back at the end.
      if (!(await this.placement.claimNew(to))) throw new TenantNameTaken(to)
      return await actor.exclusive(async () => {
        if (!nothingStoredUnder(this.store, to)) throw new TenantNameTaken(to)
        const state = actor.state
        await actor.durable(state.seq)
        const decided = await installUnderNewName(this.store, state, to, info.createdAt, decide)
        installed = true
        this.moving.add(from)
        this.actors.delete(from)
        actor.retire()
        try {
          await removeOldName(this.store, state)
        } finally {
          this.moving.delete(from)
        }
        await this.placement.release(from)
        return decided
      }, 'request')
    } catch (error) {
      if (!installed) await this.placement.release(to)
      throw error
    } finally {
      this.creating.delete(to)
    }
  }

  /** Clean shutdown: refuse new tenants, let pending writes flush, snapshot every active tenant no snapshot holds yet (`startProgress`: see snapshotEvery.ts). */
  async close(startProgress?: ProgressFactory): Promise<void> {
    this.closing = true
    this.cap.stop()
    for (const actor of this.actors.values()) actor.changes.endAll('stopping')
    // An activation under way reads the log across turns: it ends before the store may close.
    await Promise.allSettled(this.activations.values())
    await this.store.flushed()
    await snapshotEvery([...this.actors.values()], startProgress)
    // Cluster mode: the leases go back, and other nodes take the tenants at once.
    await Promise.allSettled([...this.actors.keys()].map((tenant) => this.placement.release(tenant)))
  }
}
