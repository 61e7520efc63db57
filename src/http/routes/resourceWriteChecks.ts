/*
 * The write checks by resource type (what one is: writeCheck.ts): checks
 * of what the generic writes store (create, PUT, $set in resources.ts)
 * that need more than a declaration can say — another layer (the change
 * feed's selection parser) or a wait (a DNS lookup). Each resource's own
 * file says what it checks.
 */
import type { ResourceDecl } from '../../domain/schema.js'
import type { WriteCheck } from './writeCheck.js'
import { WEBHOOK_WRITE_CHECK } from './webhooks.js'

const CHECKS: ReadonlyMap<string, WriteCheck> = new Map([['Webhook', WEBHOOK_WRITE_CHECK]])

export function writeCheckOf(decl: ResourceDecl): WriteCheck | undefined {
  return CHECKS.get(decl.type)
}
