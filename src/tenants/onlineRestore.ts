/*
 * A restore while the tenant serves (the admin listener's route, and in
 * cluster mode the internal listener of the node holding the tenant):
 *
 *   1. the tenant is opened here (in cluster mode: claimed here, or
 *      TenantElsewhere naming the node that holds it);
 *   2. its history is made readable (cluster mode: the stored snapshots and
 *      the whole log are fetched from PostgreSQL, inside the actor's
 *      exclusive job so that no append lands between the read and the
 *      listing the store keeps current);
 *   3. the new state is rebuilt (restoreSource.ts, a slice per event-loop
 *      turn) and written as a snapshot at no sequence number yet
 *      (installState.ts prepareInstall, a slice per turn) while the tenant
 *      and all others keep serving;
 *   4. inside the actor's exclusive job that snapshot is placed at the next
 *      free sequence number (installState.ts install: a header and a
 *      rename, durable before the job ends; why that is safe is said
 *      there) and the actor swaps the state in: requests to the tenant wait
 *      for that job only and then see the restored state; the log
 *      continues after it. Writes the tenant took during steps 2 and 3 are
 *      logged below the restored snapshot and left out of the restored
 *      state, as any write after the restore point.
 *
 * A tenant that cannot be opened (its log is damaged) has no actor: the
 * snapshot is written all the same, and the registry reopens the tenant,
 * whose next request activates the restored state (embedded mode; a node
 * of a cluster does not hold such a tenant, so it refuses). One restore of a
 * tenant at a time: a second is refused (412) while one runs.
 */
import { ApiError } from '../domain/errors.js'
import type { ProgressFactory } from '../progress.js'
import { prepareInstall, type InstalledState } from './installState.js'
import { rebuildState, type RestoreSource } from './restoreSource.js'
import type { TenantActor } from './tenantActor.js'
import { TenantElsewhere, TenantRefusal } from './tenantErrors.js'
import type { TenantRegistry } from './tenantRegistry.js'

/** `swapMs`: how long the swap held the tenant (its requests waited that long at most, besides the store's fetch in cluster mode). */
export type RestoreAnswer = InstalledState & { tenant: string; restored: string; pointSeq: number | null; durationMs: number; swapMs: number }

/** Cluster mode: how the store fetches a held tenant's whole history for a restore, and drops it after. */
export interface HistoryFetch {
  fetch(tenant: string): Promise<void>
  drop(tenant: string): void
}

/** What a restore under way says: progress lines, and what it waits for. */
export interface RestoreListener {
  startProgress?: ProgressFactory
  note?: (text: string) => void
}

export class OnlineRestores {
  private readonly running = new Set<string>()

  constructor(
    private readonly registry: TenantRegistry,
    private readonly history: HistoryFetch | null = null,
  ) {}

  /**
   * Opens the tenant and marks its restore as running (a second is refused meanwhile); `run` then does the work.
   * Split in two so that a caller answers refusals (unknown tenant, held elsewhere, one running) before it starts
   * streaming progress.
   */
  async begin(tenant: string): Promise<(source: RestoreSource, listener?: RestoreListener) => Promise<RestoreAnswer>> {
    if (this.running.has(tenant)) throw new ApiError('TL01-1106', `a restore of tenant '${tenant}' is running`)
    this.running.add(tenant)
    let actor: TenantActor | null
    try {
      actor = await this.actorOf(tenant)
    } catch (error) {
      this.running.delete(tenant)
      throw error
    }
    return (source, listener = {}) => this.restore(tenant, actor, source, listener).finally(() => this.running.delete(tenant))
  }

  /** The tenant's actor, or null when it cannot be opened (damaged): then there is nothing in memory to swap. */
  private async actorOf(tenant: string): Promise<TenantActor | null> {
    let actor: TenantActor | undefined
    try {
      actor = await this.registry.open(tenant)
    } catch (error) {
      // Another node holds it: the caller goes there. Closed as damaged, or shutting down: no actor to swap (in
      // cluster mode not held either, so nothing may be written: the operator's CLI restores it as its writer).
      if (error instanceof TenantElsewhere || !(error instanceof TenantRefusal) || this.history !== null) throw error
      return null
    }
    if (actor === undefined) throw new ApiError('TL01-1101', `there is no tenant '${tenant}' (a new tenant comes with the import command)`)
    return actor
  }

  /** Rebuilds, then swaps in (inside the actor's exclusive job). */
  private async restore(tenant: string, actor: TenantActor | null, source: RestoreSource, { startProgress, note }: RestoreListener): Promise<RestoreAnswer> {
    const { registry, history } = this
    const started = performance.now()
    if (history !== null) {
      note?.(`fetch ${tenant}: its snapshots and log are read from the store; the tenant's requests wait meanwhile`)
      const fetchWhenDurable = async (held: TenantActor) => {
        // No write applies during the job; the appends of those before it land first, so the fetch misses none.
        await held.durable(held.state.seq)
        await history.fetch(tenant)
      }
      await (actor === null ? history.fetch(tenant) : actor.exclusive(() => fetchWhenDurable(actor)))
    }
    try {
      const { state, description, pointSeq } = await rebuildState(tenant, registry.store, source, startProgress)
      const encode = startProgress?.(`snapshot ${tenant}`, 'records', null)
      const prepared = await prepareInstall(state, registry.store, { onProgress: (done) => encode?.update(done) })
      encode?.finish()
      let swapMs = 0
      const swap = async () => {
        const swapStarted = performance.now()
        const installed = await prepared.install()
        actor?.replaceState(state, installed.at)
        registry.closed.reopen(tenant)
        swapMs = Math.round(performance.now() - swapStarted)
        return installed
      }
      note?.(`swap ${tenant}: the restored state's snapshot is made current and put in place; the tenant's requests wait meanwhile`)
      let installed: InstalledState
      try {
        installed = actor === null ? await swap() : await actor.exclusive(swap)
      } finally {
        await prepared.discard()
      }
      if (!registry.config.quiet) console.log(`tenant '${tenant}': restored online to ${description} as seq ${installed.seq}`)
      return { tenant, ...installed, restored: description, pointSeq, durationMs: Math.round(performance.now() - started), swapMs }
    } finally {
      history?.drop(tenant)
    }
  }
}
