/*
 * The write checks the resources declare (ResourceDecl.writeCheck, what one
 * is: domain/writeCheck.ts), run for every resource alike by the generic
 * writes (create, PUT, $set in resources.ts) and by a route that writes a
 * declared resource itself (webhooks.ts). A check needs what the domain
 * cannot import; it is handed in here: the configuration and the change
 * feed's selection parser (query/changeSelection.ts).
 */
import type { ResourceDecl } from '../../domain/schema.js'
import type { WriteCheckServices } from '../../domain/writeCheck.js'
import { ChangeSelection } from '../../query/changeSelection.js'
import type { Call } from '../call.js'
import type { WriteCheck } from './writeCheck.js'

function servicesOf(call: Call): WriteCheckServices {
  return {
    allowPrivateAddresses: call.services.config.webhookAllowPrivate,
    checkChangeSelection(resources, filter) {
      ChangeSelection.parse({ resources, filter })
    },
  }
}

export function writeCheckOf(decl: ResourceDecl): WriteCheck | undefined {
  const declared = decl.writeCheck
  if (declared === null) return undefined
  return {
    values: (call, values) => declared.values(servicesOf(call), values),
    record: (call, rec) => declared.record(servicesOf(call), rec),
  }
}
