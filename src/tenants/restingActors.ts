/*
 * The actors of tenants put to rest, held only through a WeakRef: while a
 * request in flight still holds one, the registry wakes that actor instead
 * of making a second one for the tenant (whose writes the first would not
 * see); once nothing holds it, it is collected and forgotten here, and the
 * tenant's next activation makes a new actor.
 */
import type { TenantActor } from './tenantActor.js'

export class RestingActors {
  private readonly byTenant = new Map<string, WeakRef<TenantActor>>()
  private readonly forget = new FinalizationRegistry<string>((tenant) => {
    if (this.byTenant.get(tenant)?.deref() === undefined) this.byTenant.delete(tenant)
  })

  /** The tenant's resting actor, while it is reachable. */
  get(tenant: string): TenantActor | undefined {
    return this.byTenant.get(tenant)?.deref()
  }

  add(tenant: string, actor: TenantActor): void {
    this.byTenant.set(tenant, new WeakRef(actor))
    this.forget.register(actor, tenant)
  }

  /** The actor woke: it is active again. */
  woke(tenant: string, actor: TenantActor): void {
    if (this.get(tenant) === actor) this.byTenant.delete(tenant)
  }
}
