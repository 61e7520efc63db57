/*
 * The write checks the resources declare (ResourceDecl.writeCheck, what one
 * is: domain/writeCheck.ts), run for every resource alike by the generic
 * writes (create, PUT, $set in resources.ts) and by a route that writes a
 * declared resource itself (webhooks.ts). A check needs what the domain
 * cannot import; it is handed in here: the configuration and the change
 * feed's selection parser (query/changeSelection.ts).
 */
import type { Rec, ResourceDecl } from '../../domain/schema.js'
import type { WriteCheckServices } from '../../domain/writeCheck.js'
import { ChangeSelection } from '../../query/changeSelection.js'
import type { Call } from '../call.js'

/** A declared check as a route runs it: the declaration's, handed what it needs from the call. */
export interface RouteWriteCheck {
  /** Before the write, on the values read from the request (it may wait: a DNS lookup). */
  values(call: Call, values: Record<string, unknown>): Promise<void>
  /** Inside the write, on the record as stored (a throw rolls the write back). */
  record(call: Call, rec: Rec): void
}

function servicesOf(call: Call): WriteCheckServices {
  return {
    allowPrivateAddresses: call.services.config.webhookAllowPrivate,
    checkChangeSelection(resources, filter) {
      ChangeSelection.parse({ resources, filter })
    },
  }
}

export function writeCheckOf(decl: ResourceDecl): RouteWriteCheck | undefined {
  const declared = decl.writeCheck
  if (declared === null) return undefined
  return {
    values: (call, values) => declared.values(servicesOf(call), values),
    record: (call, rec) => declared.record(servicesOf(call), rec),
  }
}
