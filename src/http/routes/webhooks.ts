/*
 * Webhooks over the API (domain/resources/webhook.ts; the deliveries are
 * src/webhooks/'s). The generic routes serve them, with two additions:
 *
 *   POST /webhooks   creates one (the Webhook:POST action): a secret not
 *                    given is made here, before the write (it is random),
 *                    and shown in the answer this once, as `secret`
 *
 * and the check every write of a webhook passes, declared with the resource
 * (domain/resources/webhook.ts), run here as resources.ts runs it on create,
 * PUT and $set (resourceWriteChecks.ts).
 */
import { newToken } from '../../domain/credentials.js'
import { accessDenied } from '../../domain/errors.js'
import { readFields } from '../../domain/input.js'
import { createWebhook } from '../../domain/operations/webhooks.js'
import { Webhook } from '../../domain/resources/webhook.js'
import { parseObjectBody } from '../body.js'
import type { Call } from '../call.js'
import { requireSession } from '../requireSession.js'
import type { ApiResponse } from '../response.js'
import { objectAnswer } from './objectAnswer.js'
import type { ResourceAction } from './resourceAction.js'
import { writeCheckOf } from './resourceWriteChecks.js'

const WEBHOOK_WRITE_CHECK = writeCheckOf(Webhook)

async function createWebhookRoute(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  // Before the address is looked up: a caller who may not create one learns nothing of it.
  if (!principal.superuser) throw accessDenied('only the account owner and admins manage webhooks')
  const { value, source } = parseObjectBody(call.request)
  const values = readFields(Webhook, value, source, true)
  await WEBHOOK_WRITE_CHECK?.values(call, values)
  const secret = newToken()
  const rec = await tenant.write((tx) => {
    const created = createWebhook(tx, principal, values, secret, tx.state.seq)
    WEBHOOK_WRITE_CHECK?.record(call, created)
    return created
  })
  const made = rec.secret === secret
  return objectAnswer(call, tenant, Webhook, rec, 201, made ? { secret } : undefined)
}

export const WEBHOOK_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([['Webhook:POST', { handle: (call: Call) => createWebhookRoute(call) }]])
