/*
 * The tenant as a signed-in caller uses it: every write it makes names the
 * caller (Tx.actAs), so the write's log entry records who made it and
 * the history of an object can tell (log format 4). Reads
 * go through unchanged. requireSession.ts hands it out, so every route
 * that needs a session writes as its user; a batch's items do too, on the
 * batch's shared transaction.
 */
import type { Steps } from '../domain/steps.js'
import type { TenantView, Tx } from '../domain/tx.js'
import type { MaybePromise } from '../maybePromise.js'
import type { TenantAccess } from './call.js'

export class ActingTenant implements TenantAccess {
  constructor(
    private readonly tenant: TenantAccess,
    private readonly userId: string,
  ) {}

  read<T>(query: (state: TenantView) => T): MaybePromise<T> {
    return this.tenant.read(query)
  }

  readInSlices<T>(query: (state: TenantView) => Steps<T>): MaybePromise<T> {
    return this.tenant.readInSlices(query)
  }

  inspect<T>(query: (state: TenantView) => T): MaybePromise<T> {
    return this.tenant.inspect(query)
  }

  write<T>(decide: (tx: Tx) => T): Promise<T> {
    const userId = this.userId
    return this.tenant.write((tx) => {
      tx.actAs(userId)
      return decide(tx)
    })
  }

  writeInSlices<T>(decide: (tx: Tx) => Steps<T>): Promise<T> {
    const userId = this.userId
    return this.tenant.writeInSlices((tx) => {
      tx.actAs(userId)
      return decide(tx)
    })
  }
}
