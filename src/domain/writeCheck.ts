/*
 * A resource's write check (ResourceDecl.writeCheck): what the generic
 * writes (create, PUT, PATCH, $set) store, checked beyond what fields and
 * constraints can say. `values` runs before the write on the values read
 * from the request, and may wait (a DNS lookup); `record` runs inside the
 * write on the record as stored (a throw rolls the write back). What a check
 * needs from the layers above the domain (the configuration, the change
 * feed's selection grammar in query/) the caller hands in as
 * WriteCheckServices; http/routes/resourceWriteChecks.ts runs the declared
 * checks for every resource alike.
 */
import type { Rec } from './record.js'

export interface WriteCheckServices {
  /** WEBHOOK_ALLOW_PRIVATE: an address may be (or resolve to) a private or loopback one. */
  readonly allowPrivateAddresses: boolean
  /** Throws the change feed's 400 when `resources` and `filter` are not a selection it accepts (query/changeSelection.ts). */
  checkChangeSelection(resources: string, filter: string): void
}

export interface WriteCheck {
  /** Before the write, on the values read from the request. */
  values(services: WriteCheckServices, values: Readonly<Record<string, unknown>>): Promise<void>
  /** Inside the write, on the record as stored. */
  record(services: WriteCheckServices, rec: Rec): void
}
