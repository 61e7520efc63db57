/*
 * The tenant directory: one row per tenant (TenantInfo, persist/ports.ts) in
 * the GlobalDirectory. A row is what the calls that name no tenant (sign-up,
 * the checks of an address, the webhooks' wake-up at start) know of a
 * tenant without loading it, so every read and write of a row is here, with
 * the rules that decide what it says:
 *
 *   founding   a tenant's row is issued in the turn of its first log entry
 *              (the write that creates it), so both share one commit: a
 *              crash keeps both or neither.
 *   sign-ups   a tenant made by sign-up carries `unconfirmed` until its
 *              account is confirmed (noteConfirmed, inside the confirming
 *              write: the same commit). Once createdAt +
 *              SIGNUP_CONFIRMATION_LIFETIME_MS has passed, the public calls
 *              read it as free (expiredSignUp: no activation needed) and a
 *              new sign-up of the same address refounds it (refoundSignUp):
 *              one write in the tenant that removes what the old sign-up
 *              left and founds the new account, with a new row in the same
 *              commit. Whether the old one really expired is decided again
 *              inside that write from the tenant's state and the write's own
 *              time, so two sign-ups racing for the address cannot both win.
 *   webhooks   `webhooks` is set while the tenant has an active webhook, so
 *              a restart wakes exactly the tenants whose deliveries must go
 *              on (webhooks/). The write that made a webhook start or stop
 *              delivering sets or clears it (globalIndexes.ts tells which
 *              writes those are), in the same commit.
 *   installed  a state put in place whole (a restore, an import, a rename:
 *              installState.ts) gets a row when it has none, last, so a
 *              crash before leaves no tenant without its snapshot.
 *   removed    a tenant moved away (tenantRename.ts) loses its row last.
 *
 * A write is issued (not awaited) in the turn of the log append it belongs
 * to and joins that append's commit (DirectoryTable, ports.ts). A name no
 * tenant can have (longer than a tenant name) is never a key: it has no row.
 */
import { fitsTenantName } from '../domain/tenantName.js'
import type { MaybePromise } from '../maybePromise.js'
import type { GlobalDirectory, TenantInfo } from '../persist/ports.js'
import type { WriteTx } from '../engine/writeTx.js'

/** The tenant's row; none for a name no tenant can have. */
export function directoryRow(store: GlobalDirectory, tenant: string): TenantInfo | undefined {
  return fitsTenantName(tenant) ? store.tenants.get(tenant) : undefined
}

/** Every tenant with a row, in name order. */
export function tenantNames(store: GlobalDirectory): string[] {
  return [...store.tenants.getKeys()]
}

/** Sets or clears the tenant's `webhooks` marker when it differs from `active` (whether it has an active webhook now). */
export function markWebhooks(store: GlobalDirectory, tenant: string, active: boolean): void {
  const row = directoryRow(store, tenant)
  if (row === undefined || (row.webhooks === true) === active) return
  void store.tenants.put(tenant, withWebhooksMarker(row, active))
}

/** The row of a tenant whose whole state was just installed, when it has none: made at `createdAt`, marked as its state says. */
export function installRow(store: GlobalDirectory, tenant: string, createdAt: number, activeWebhook: boolean): void {
  if (directoryRow(store, tenant) === undefined) void store.tenants.put(tenant, withWebhooksMarker({ createdAt }, activeWebhook))
}

/** The row of a tenant whose storage is gone: the last of it to go. */
export function removeRow(store: GlobalDirectory, tenant: string): void {
  void store.tenants.remove(tenant)
}

function withWebhooksMarker(row: TenantInfo, active: boolean): TenantInfo {
  const { webhooks: _was, ...rest } = row
  return active ? { ...rest, webhooks: true } : rest
}

/** The rows as the registry and the public calls use them (see the top). */
export class TenantDirectory {
  constructor(
    private readonly store: GlobalDirectory,
    /** SIGNUP_CONFIRMATION_LIFETIME_MS. */
    private readonly signUpLifetimeMs: number,
  ) {}

  row(tenant: string): TenantInfo | undefined {
    return directoryRow(this.store, tenant)
  }

  has(tenant: string): boolean {
    return this.row(tenant) !== undefined
  }

  /** Every tenant with a row, in name order. */
  names(): string[] {
    return tenantNames(this.store)
  }

  /** Inside the write that founds the tenant (created, or refounded by a sign-up): its new row, in the same commit. */
  found(tenant: string, atMs: number, signUp: boolean): void {
    void this.store.tenants.put(tenant, signUp ? { createdAt: atMs, unconfirmed: true } : { createdAt: atMs })
  }

  /** Whether the tenant is a sign-up that was not confirmed in time (see the top). */
  expiredSignUp(tenant: string, nowMs = Date.now()): boolean {
    const row = this.row(tenant)
    return row?.unconfirmed === true && row.createdAt + this.signUpLifetimeMs <= nowMs
  }

  /** Inside the write that confirms the tenant's account: the row loses `unconfirmed` in the same commit. */
  noteConfirmed(tenant: string): void {
    const row = this.row(tenant)
    if (row?.unconfirmed === true) void this.store.tenants.put(tenant, withWebhooksMarker({ createdAt: row.createdAt }, row.webhooks === true))
  }

  /** Whether the tenant's deliveries must go on without a request (see the top). */
  webhooksMarked(tenant: string): boolean {
    return this.row(tenant)?.webhooks === true
  }
}

/** What refounding asks of the registry (tenantRegistry.ts, which imports this module: it is described here, not imported). */
export interface Founder {
  readonly directory: TenantDirectory
  /** ShuttingDown once the registry closes. */
  refuseWhileClosing(): void
  open(tenant: string): MaybePromise<{ write<T>(decide: (tx: WriteTx) => T): Promise<T> } | undefined>
  create<T>(tenant: string, decide: (tx: WriteTx) => T, info: { unconfirmed?: boolean }): Promise<T>
}

/**
 * Founds an expired sign-up's tenant anew: `decide` runs as one write in it (it checks the expiry against the state
 * and removes what is there) and the row is replaced in the same commit; a tenant gone meanwhile is created.
 */
export async function refoundSignUp<T>(registry: Founder, tenant: string, decide: (tx: WriteTx) => T): Promise<T> {
  registry.refuseWhileClosing()
  const actor = await registry.open(tenant)
  if (actor === undefined) return registry.create(tenant, decide, { unconfirmed: true })
  return actor.write((tx) => {
    const decided = decide(tx)
    registry.directory.found(tenant, tx.now, true)
    return decided
  })
}
