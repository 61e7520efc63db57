/*
 * The tenants of this server: the directory in LMDB says which exist; an
 * actor is activated (recovered from disk) on a tenant's first request and
 * kept in memory. Creating a tenant writes its directory row and its first
 * log entry in the same group commit.
 */
import type { Config } from '../config.js'
import { ApiError } from '../domain/errors.js'
import { LogCorruptError, type LogStore } from '../persist/logStore.js'
import { RecoveryError } from '../persist/recovery.js'
import { TenantActor } from './tenantActor.js'
import type { WriteTx } from './writeTx.js'

export const TENANT_NAME_MAX_LENGTH = 63

export class TenantRegistry {
  private readonly actors = new Map<string, TenantActor>()
  private readonly creating = new Set<string>()
  private closing = false

  constructor(
    readonly config: Config,
    readonly store: LogStore,
  ) {}

  exists(tenant: string): boolean {
    return this.actors.has(tenant) || this.creating.has(tenant) || this.store.tenants.get(tenant) !== undefined
  }

  /** The tenant's actor, activated on first use; undefined for an unknown tenant. */
  get(tenant: string): TenantActor | undefined {
    const active = this.actors.get(tenant)
    if (active !== undefined) return active
    const info = this.store.tenants.get(tenant)
    if (info === undefined) return undefined
    let actor: TenantActor
    try {
      actor = TenantActor.recover(tenant, this.config, this.store)
    } catch (error) {
      if (!(error instanceof LogCorruptError || error instanceof RecoveryError)) throw error
      // This tenant stays closed until an operator repairs or restores it; the others are unaffected.
      console.error(`tenant '${tenant}' cannot be recovered: ${error.message}`)
      throw new ApiError('TL01-9011', `tenant '${tenant}' cannot be opened: ${error.message}`, null, [], { 'Retry-After': '60' })
    }
    this.actors.set(tenant, actor)
    return actor
  }

  active(): IterableIterator<TenantActor> {
    return this.actors.values()
  }

  /** Every tenant in the directory. */
  names(): string[] {
    return [...this.store.tenants.getKeys()]
  }

  /** Creates a tenant whose first log entry is what `decide` writes; resolves when durable. */
  async create<T>(tenant: string, decide: (tx: WriteTx) => T): Promise<T> {
    if (this.closing) throw new ApiError('TL01-9011', 'the server is shutting down', null, [], { 'Retry-After': '1' })
    if (this.exists(tenant)) throw new ApiError('TL01-1102', `the account address '${tenant}' is taken`)
    this.creating.add(tenant)
    try {
      const actor = TenantActor.fresh(tenant, this.config, this.store)
      // The directory row is issued in the same turn as the first entry, so both share one commit.
      const result = await actor.writeNow((tx) => {
        const decided = decide(tx)
        void this.store.tenants.put(tenant, { createdAt: tx.now })
        return decided
      })
      this.actors.set(tenant, actor)
      return result
    } finally {
      this.creating.delete(tenant)
    }
  }

  /** Drops a tenant from memory (it is activated again from disk on its next request). */
  evict(tenant: string): void {
    this.actors.delete(tenant)
  }

  async snapshotAll(): Promise<void> {
    for (const actor of this.actors.values()) await actor.snapshot()
  }

  /** Clean shutdown: refuse new tenants, let pending writes flush, snapshot every active tenant. */
  async close(): Promise<void> {
    this.closing = true
    await this.store.flushed()
    await this.snapshotAll()
  }
}
