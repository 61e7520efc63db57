/*
 * The tenants of this server: the tenant directory (GlobalDirectory,
 * persist/ports.ts) says which exist; an actor is activated (recovered from
 * the storage) on a tenant's first request and kept in memory. Creating a tenant writes its directory row and its first
 * log entry in the same group commit.
 *
 * Eviction. evict() puts a tenant to rest as an exclusive job of its actor
 * (so no request or write runs meanwhile): it re-checks that nobody waits
 * (and, for the idle sweep, that the tenant is still idle), waits for the
 * log to be durable, snapshots when entries were logged since the last
 * snapshot, checks again, and drops the state (TenantActor.hibernate). The
 * actor object itself is kept only through a WeakRef: a request in flight
 * that still holds it reloads the state on its next touch and the actor
 * rejoins the active set, and a new actor is made for the tenant only once
 * the old one is unreachable, so there is never a second live actor for a
 * tenant. MAX_ACTIVE_TENANTS evicts the least recently used past the cap;
 * an eviction that gives up (a request came for that tenant meanwhile) has
 * the cap checked again CAP_RECHECK_MS later, so the cap is never left
 * exceeded until the next activation.
 *
 * Activation. Requests open a tenant with `open`, which loads it a slice
 * per event-loop turn (recoverTenantInTurns): loading a million time
 * records takes seconds, and done at once it would hold up every other
 * tenant for as long (ARCHITECTURE.md §2.4). Requests for the tenant meanwhile wait
 * for the same activation; a resting tenant wakes the same way, as an
 * exclusive job of its actor. `get` loads at once, for operator tools and
 * tests; it refuses a tenant whose activation is under way, so there is
 * never a second actor for a tenant, and shutdown waits for activations.
 *
 * Listeners. Whatever must run for every tenant in memory (the webhooks'
 * deliveries) registers with onActivated and hears of each tenant whose
 * state comes into memory here: activated, created, woken from rest.
 *
 * Sign-ups. A tenant made by sign-up carries `unconfirmed` in its
 * directory row until its account is confirmed; once createdAt +
 * SIGNUP_CONFIRMATION_LIFETIME_MS has passed, the public calls read it as
 * free (expiredSignUp: no activation needed) and a new sign-up of the same
 * address refounds it: one write in the tenant that removes what the old
 * sign-up left and founds the new account, with a new directory row in the
 * same commit. Whether the old one really expired is decided again inside
 * that write from the tenant's state and the write's own time, so two
 * sign-ups racing for the address cannot both win.
 *
 * Renaming. rename() moves a tenant to another name as an exclusive job of
 * its actor (tenantRename.ts), the new name reserved like a tenant being
 * created; the old actor leaves the active set and is retired.
 *
 * Cluster mode. With a placement (placement.ts, ARCHITECTURE.md §8) a tenant is
 * this node's only while it holds the tenant's lease: activation first
 * acquires it (a tenant held elsewhere is refused with TenantElsewhere,
 * which the router forwards), an active tenant is served only while the
 * lease is live by this node's clock, a tenant put to rest gives its lease
 * back and is not kept as a resting actor (another node may take it, so
 * its state here would go stale: the released actor refuses every touch
 * with TenantMoved), a lost lease drops the actor at once, and a failed
 * append drops the tenant instead of reloading it from the log (the next
 * request activates it again from what PostgreSQL holds). Creating a tenant
 * claims its name's lease first: the lease row is what makes one name one
 * tenant across nodes. The node that created a tenant gives the lease back
 * once the first entry is durable: a sign-up is a public call that HAProxy
 * routes without the tenant's host, and the tenant's own requests (routed
 * by its host) claim it on the node they land on.
 *
 * Damage. A tenant whose snapshot or log cannot be recovered (an entry that
 * cannot be decoded or applied, a gap) is remembered as closed, in memory:
 * its later requests get the same 503 at once instead of a new recovery
 * each (which would read and replay the tenant synchronously, holding up
 * every tenant). An online restore reopens it (reopen()); a restart, e.g.
 * after an offline restore, forgets it and tries again.
 */
import type { Config } from '../config.js'
import { fitsTenantName } from '../domain/tenantName.js'
import type { MaybePromise } from '../maybePromise.js'
import type { ProgressFactory } from '../progress.js'
import { LogCorruptError, type Storage, type TenantInfo } from '../persist/ports.js'
import type { Placed, Placement } from './placement.js'
import { RecoveryError } from './recovery.js'
import { TenantActor, type AppendFailurePolicy } from './tenantActor.js'
import { PlacementUnavailable, ShuttingDown, TenantClosed, TenantElsewhere, TenantLoading, TenantMoved, TenantNameTaken, TenantRenamed } from './tenantErrors.js'
import { installUnderNewName, removeOldName } from './tenantRename.js'
import { objectCount } from './installState.js'
import type { WriteTx } from '../engine/writeTx.js'

/** How long after an eviction for the cap gave up the cap is checked again. */
const CAP_RECHECK_MS = 50

export class TenantRegistry {
  /** Tenants with their state in memory. */
  private readonly actors = new Map<string, TenantActor>()
  /** Tenants put to rest, while their actor object is still reachable from somewhere. */
  private readonly resting = new Map<string, WeakRef<TenantActor>>()
  private readonly forgetResting = new FinalizationRegistry<string>((tenant) => {
    if (this.resting.get(tenant)?.deref() === undefined) this.resting.delete(tenant)
  })
  private readonly evicting = new Set<string>()
  /** Tenants put to rest since start. */
  evictions = 0
  private readonly creating = new Set<string>()
  /** Tenants whose storage is being removed after a rename: they exist for no one, and no one may take the name yet. */
  private readonly moving = new Set<string>()
  private closing = false
  /** The pending re-check of MAX_ACTIVE_TENANTS (enforceCap), if any. */
  private capRecheck: NodeJS.Timeout | null = null
  /** Activations and wakes under way (`open`), so that every request for the tenant waits for the same one. */
  private readonly activations = new Map<string, Promise<TenantActor | undefined>>()
  /** Tenants that could not be recovered, with the reason; answered 503 without a new attempt until reopen(). */
  private readonly damaged = new Map<string, string>()
  /** Recoveries that failed since start (each closes a tenant; a closed tenant is not tried again). */
  failedRecoveries = 0
  /** Told of every tenant whose state came into memory here (activated, created, woken): onActivated. */
  private readonly activationListeners: ((actor: TenantActor) => void)[] = []

  /** What an actor does after a failed append: reload from the log (embedded), or be dropped (cluster). */
  private readonly appendFailure: AppendFailurePolicy | undefined

  constructor(
    readonly config: Config,
    readonly store: Storage,
    /** Cluster mode: which tenants this node may serve (placement.ts); null in the embedded default. */
    readonly placement: Placement | null = null,
  ) {
    if (placement !== null) {
      placement.onLost((tenant) => this.drop(tenant))
      this.appendFailure = (actor, seq, error) => {
        console.error(`tenant '${actor.tenant}': log append of entry ${seq} failed (${error instanceof Error ? error.message : String(error)}); the tenant is dropped here`)
        this.drop(actor.tenant)
        void placement.release(actor.tenant)
      }
    }
  }

  exists(tenant: string): boolean {
    return this.actors.has(tenant) || this.creating.has(tenant) || this.moving.has(tenant) || this.directoryRow(tenant) !== undefined
  }

  /** The tenant's row in the directory; none for a name no tenant can have (longer than a tenant name: never a key). */
  private directoryRow(tenant: string): TenantInfo | undefined {
    return fitsTenantName(tenant) ? this.store.tenants.get(tenant) : undefined
  }

  /**
   * The tenant's actor: at once when it is active (maybePromise.ts), else once it is activated, a slice per
   * event-loop turn (see the top); undefined for an unknown tenant; 503 for a damaged one.
   */
  open(tenant: string): MaybePromise<TenantActor | undefined> {
    if (!fitsTenantName(tenant)) return undefined
    const active = this.actors.get(tenant)
    if (active === undefined) return this.activate(tenant)
    if (this.placement !== null && !this.placement.serving(tenant)) {
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
    if (this.closing) throw new ShuttingDown()
    if (this.moving.has(tenant)) throw new TenantRenamed(tenant)
    const damage = this.damaged.get(tenant)
    if (damage !== undefined) throw new TenantClosed(tenant, damage)
    const resting = this.resting.get(tenant)?.deref()
    if (resting !== undefined) {
      resting.lastUsedMs = Date.now()
      return this.activation(tenant, async () => {
        await resting.wake()
        return resting
      })
    }
    if (this.placement !== null) return this.activation(tenant, () => this.activatePlaced(tenant, this.placement as Placement))
    if (this.directoryRow(tenant) === undefined) return undefined
    return this.activation(tenant, async () => {
      const actor = await TenantActor.recoverInTurns(tenant, this.config, this.store)
      this.activated(tenant, actor)
      return actor
    })
  }

  /** Cluster mode: activates the tenant here once this node holds its lease; TenantElsewhere when another node does. */
  private async activatePlaced(tenant: string, placement: Placement): Promise<TenantActor | undefined> {
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

  /** Cluster mode: this node no longer serves the tenant (lease lost, or a failed append): its actor goes at once. */
  drop(tenant: string): void {
    const actor = this.actors.get(tenant)
    if (actor === undefined) return
    this.actors.delete(tenant)
    actor.release()
  }

  /** Runs `load` as the tenant's activation under way, which later requests share (and close waits for). */
  private activation<T extends TenantActor | undefined>(tenant: string, load: () => Promise<T>): Promise<T> {
    const activating = this.openOrCloseInTurns(tenant, load).finally(() => this.activations.delete(tenant))
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
    if (this.activations.has(tenant)) {
      throw new TenantLoading(tenant)
    }
    if (this.moving.has(tenant)) throw new TenantRenamed(tenant)
    // A node activates a tenant only after claiming its lease, which waits for PostgreSQL: never at once.
    if (this.placement !== null) throw new TenantMoved(tenant)
    const damage = this.damaged.get(tenant)
    if (damage !== undefined) throw new TenantClosed(tenant, damage)
    const resting = this.resting.get(tenant)?.deref()
    if (resting !== undefined) {
      // Touching the state reloads it; the actor's wake-up moves it back among the active ones.
      this.openOrClose(tenant, () => resting.state)
      resting.lastUsedMs = Date.now()
      return resting
    }
    const info = this.store.tenants.get(tenant)
    if (info === undefined) return undefined
    const actor = this.openOrClose(tenant, () => TenantActor.recover(tenant, this.config, this.store))
    this.activated(tenant, actor)
    return actor
  }

  /** Tenants closed because they could not be recovered, with the reason. */
  closedTenants(): ReadonlyMap<string, string> {
    return this.damaged
  }

  /** Forgets that a tenant could not be recovered (a restore has put a new state on disk); its next request loads it. */
  reopen(tenant: string): void {
    this.damaged.delete(tenant)
  }

  /** Runs `open` (which loads a tenant from disk); a tenant whose snapshot or log is damaged is closed and answers 503. */
  private openOrClose<T>(tenant: string, open: () => T): T {
    try {
      return open()
    } catch (error) {
      throw this.closedFor(tenant, error)
    }
  }

  /** openOrClose for a load that runs across event-loop turns. */
  private async openOrCloseInTurns<T>(tenant: string, open: () => Promise<T>): Promise<T> {
    try {
      return await open()
    } catch (error) {
      throw this.closedFor(tenant, error)
    }
  }

  /** The error to throw for a load that failed: a damaged tenant stays closed until an operator restores it. */
  private closedFor(tenant: string, error: unknown): unknown {
    if (!(error instanceof LogCorruptError || error instanceof RecoveryError)) return error
    // The others are unaffected.
    console.error(`tenant '${tenant}' cannot be recovered: ${error.message}`)
    this.damaged.set(tenant, error.message)
    this.failedRecoveries += 1
    return new TenantClosed(tenant, error.message)
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
        const idle = () =>
          !this.closing && this.actors.get(tenant) === actor && actor.waiting === 0 && actor.changes.subscriberCount === 0 && Date.now() - actor.lastUsedMs >= idleForMs
        if (!idle()) return false
        await actor.durable(actor.state.seq)
        if (actor.logEntriesSinceSnapshot > 0) await actor.snapshot()
        // A snapshot that was already running when the eviction began may not hold the newest entries.
        if (actor.logEntriesSinceSnapshot > 0) await actor.snapshot()
        if (!idle()) return false
        this.actors.delete(tenant)
        this.evictions += 1
        if (this.placement !== null) {
          // Another node may take the tenant from now on: this actor's state would go stale, so it is not kept.
          actor.release()
          await this.placement.release(tenant)
          return true
        }
        this.resting.set(tenant, new WeakRef(actor))
        this.forgetResting.register(actor, tenant)
        actor.hibernate(() => this.woke(tenant, actor))
        return true
      })
    } finally {
      this.evicting.delete(tenant)
    }
  }

  private activated(tenant: string, actor: TenantActor): void {
    this.actors.set(tenant, actor)
    this.enforceCap(actor)
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
    if (this.resting.get(tenant)?.deref() === actor) this.resting.delete(tenant)
    this.activated(tenant, actor)
  }

  /** Past MAX_ACTIVE_TENANTS, puts the least recently used tenants to rest (not `keep`, the one just activated). */
  private enforceCap(keep: TenantActor | null): void {
    const max = this.config.maxActiveTenants
    const excess = this.actors.size - this.evicting.size - max
    if (max === 0 || excess <= 0 || this.closing) return
    const candidates = [...this.actors.values()].filter((actor) => actor !== keep && !this.evicting.has(actor.tenant))
    candidates.sort((a, b) => a.lastUsedMs - b.lastUsedMs)
    for (const actor of candidates.slice(0, excess)) {
      this.evict(actor.tenant).then(
        (rested) => {
          if (!rested) this.recheckCapSoon()
        },
        (error: unknown) => console.error(`evicting tenant '${actor.tenant}' failed:`, error),
      )
    }
  }

  private recheckCapSoon(): void {
    if (this.capRecheck !== null || this.closing) return
    this.capRecheck = setTimeout(() => {
      this.capRecheck = null
      this.enforceCap(null)
    }, CAP_RECHECK_MS)
    this.capRecheck.unref()
  }

  /** Every tenant in the directory. */
  names(): string[] {
    return [...this.store.tenants.getKeys()]
  }

  /** Whether the tenant is a sign-up that was not confirmed in time (its directory row says so, see the top). */
  expiredSignUp(tenant: string, nowMs = Date.now()): boolean {
    const info = this.directoryRow(tenant)
    return info?.unconfirmed === true && info.createdAt + this.config.signUpConfirmationLifetimeMs <= nowMs
  }

  /** Inside the write that confirms the tenant's account: the directory row loses `unconfirmed` in the same commit. */
  noteConfirmed(tenant: string): void {
    const info = this.store.tenants.get(tenant)
    if (info?.unconfirmed === true) void this.store.tenants.put(tenant, info.webhooks === true ? { createdAt: info.createdAt, webhooks: true } : { createdAt: info.createdAt })
  }

  /**
   * Founds an expired sign-up's tenant anew: `decide` runs as one write in it (it checks the expiry against
   * the state and removes what is there) and the directory row is replaced in the same commit.
   */
  async refound<T>(tenant: string, decide: (tx: WriteTx) => T): Promise<T> {
    if (this.closing) throw new ShuttingDown()
    const actor = await this.open(tenant)
    if (actor === undefined) return this.create(tenant, decide, { unconfirmed: true })
    return actor.write((tx) => {
      const decided = decide(tx)
      void this.store.tenants.put(tenant, { createdAt: tx.now, unconfirmed: true })
      return decided
    })
  }

  /** Creates a tenant whose first log entry is what `decide` writes; resolves when durable. */
  async create<T>(tenant: string, decide: (tx: WriteTx) => T, info: { unconfirmed?: boolean } = {}): Promise<T> {
    if (this.closing) throw new ShuttingDown()
    if (this.exists(tenant)) throw new TenantNameTaken(tenant)
    this.creating.add(tenant)
    try {
      if (this.placement !== null && !(await this.placement.claimNew(tenant))) throw new TenantNameTaken(tenant)
      const actor = TenantActor.fresh(tenant, this.config, this.store, this.appendFailure)
      // The directory row is issued in the same turn as the first entry, so both share one commit.
      const written = actor.writeNow((tx) => {
        const decided = decide(tx)
        void this.store.tenants.put(tenant, info.unconfirmed === true ? { createdAt: tx.now, unconfirmed: true } : { createdAt: tx.now })
        return decided
      })
      if (this.placement === null) {
        const result = await written
        this.activated(tenant, actor)
        return result
      }
      // Cluster mode: the node that created the tenant (a public call, routed without the tenant's host) does not keep
      // it, whether the creation happened or not. HAProxy sends the tenant's own requests by its host, perhaps to
      // another node: the first of them claims it where it lands, and recovers its one log entry.
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
    if (this.closing) throw new ShuttingDown()
    if (this.exists(to)) throw new TenantNameTaken(to)
    const actor = await this.open(from)
    const info = this.store.tenants.get(from)
    if (actor === undefined || info === undefined) throw new TenantRenamed(from)
    this.creating.add(to)
    let installed = false
    try {
      // Cluster mode: the new name's lease first, as for a tenant being created; the old one is given back at the end.
      if (this.placement !== null && !(await this.placement.claimNew(to))) throw new TenantNameTaken(to)
      return await actor.exclusive(async () => {
        if (this.store.tenants.get(to) !== undefined || this.store.lastSeq(to) > 0 || this.store.snapshots.list(to).length > 0) throw new TenantNameTaken(to)
        await actor.durable(actor.state.seq)
        const decided = await installUnderNewName(this.store, actor.state, to, info.createdAt, decide)
        installed = true
        this.moving.add(from)
        this.actors.delete(from)
        actor.retire()
        try {
          await removeOldName(this.store, actor.state)
        } finally {
          this.moving.delete(from)
        }
        await this.placement?.release(from)
        return decided
      })
    } catch (error) {
      if (!installed) await this.placement?.release(to)
      throw error
    } finally {
      this.creating.delete(to)
    }
  }

  /**
   * Snapshots every tenant in memory, one after the other. `startProgress` hears the records written over all of
   * them: a stop of a server holding a million records writes for seconds, and the operator sees it go.
   */
  async snapshotAll(startProgress?: ProgressFactory): Promise<void> {
    const actors = [...this.actors.values()]
    const shown = startProgress?.(`snapshot ${actors.length} ${actors.length === 1 ? 'tenant' : 'tenants'}`, 'records', actors.reduce((sum, actor) => sum + objectCount(actor.state), 0))
    let before = 0
    for (const actor of actors) {
      await actor.snapshot((done) => shown?.update(before + done))
      before += objectCount(actor.state)
      shown?.update(before)
    }
    shown?.finish()
  }

  /** Clean shutdown: refuse new tenants, let pending writes flush, snapshot every active tenant (`startProgress`: see snapshotAll). */
  async close(startProgress?: ProgressFactory): Promise<void> {
    this.closing = true
    if (this.capRecheck !== null) clearTimeout(this.capRecheck)
    for (const actor of this.actors.values()) actor.changes.endAll('stopping')
    // An activation under way reads the log across turns: it ends before the store may close.
    await Promise.allSettled(this.activations.values())
    await this.store.flushed()
    await this.snapshotAll(startProgress)
    if (this.placement !== null) {
      const placement = this.placement
      await Promise.allSettled([...this.actors.keys()].map((tenant) => placement.release(tenant)))
    }
  }
}
