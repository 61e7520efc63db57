/*
 * What the routes read of the store beside the tenants' state: uploaded
 * files' bytes, and the global look-ups across tenants (the
 * e-mail index, password confirmations, a tenant name just signed up on
 * another node). The routes ask the registry's `beside`, and the store
 * itself stays the tenant layer's: HTTP never holds it.
 */
import type { MaybePromise } from '../maybePromise.js'
import type { Storage } from '../persist/ports.js'
import { freshTenantsWithConfirmation, freshTenantsWithEmail } from './globalIndexes.js'

export class BesideTenants {
  constructor(private readonly store: Storage) {}

  /** The bytes of an uploaded file, by tenant and file key (a write stores them: besideWrites.ts). */
  fileBytes(tenant: string, fileKey: string): MaybePromise<Buffer | undefined> {
    return this.store.files.get([tenant, fileKey])
  }

  /** The tenants with a live user of this e-mail, after every write acknowledged on any node (globalIndexes.ts). */
  tenantsWithEmail(email: string): Promise<string[]> {
    return freshTenantsWithEmail(this.store, email)
  }

  /** The tenants holding the password confirmation `hash`, after every write acknowledged on any node (globalIndexes.ts). */
  tenantsWithConfirmation(hash: string): Promise<string[]> {
    return freshTenantsWithConfirmation(this.store, hash)
  }

  /** Reads the tenant name afresh where the directory is a copy (a cluster node's may not hold a sign-up another node has just made). */
  async freshenTenantName(tenant: string): Promise<void> {
    await this.store.freshen?.('tenants', tenant)
  }
}
