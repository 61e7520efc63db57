/*
 * Webhooks over the API (domain/resources/webhook.ts; the deliveries are
 * src/webhooks/'s). The generic routes serve them, with two additions:
 *
 *   POST /webhooks   creates one (the Webhook:POST action): a secret not
 *                    given is made here, before the write (it is random),
 *                    and shown in the answer this once, as `secret`
 *
 * and the check every write of a webhook passes (WEBHOOK_WRITE_CHECK, run by
 * resources.ts on create, PUT and $set): `url` is http(s) and, unless
 * WEBHOOK_ALLOW_PRIVATE=1, neither is nor resolves to a private or loopback
 * address (domain/webhookAddress.ts: the resolution before the write, the
 * literal inside it); `resources` and `filter` are what the change feed
 * accepts (query/changeSelection.ts), checked on the record as stored, so a
 * PUT that changes one is checked against the other; webhooks' own records
 * are never delivered, so `resources` may not name them. All of it is
 * 400 TL01-1105.
 */
import { newToken } from '../../domain/credentials.js'
import { accessDenied, ApiError, wrongParameter } from '../../domain/errors.js'
import { readFields } from '../../domain/input.js'
import { createWebhook } from '../../domain/operations/webhooks.js'
import { resourceByPath } from '../../domain/resources/index.js'
import { Webhook } from '../../domain/resources/webhook.js'
import type { Rec } from '../../domain/schema.js'
import { checkWebhookUrl, webhookUrl } from '../../domain/webhookAddress.js'
import { ChangeSelection } from '../../query/changeSelection.js'
import { parseObjectBody } from '../body.js'
import type { Call } from '../call.js'
import { requireSession } from '../requireSession.js'
import type { ApiResponse } from '../response.js'
import { objectAnswer } from './objectAnswer.js'
import type { ResourceAction } from './resourceAction.js'
import type { WriteCheck } from './writeCheck.js'

function checkSelection(rec: Rec): void {
  const resources = typeof rec.resources === 'string' ? rec.resources : ''
  for (const path of resources.split(',')) {
    if (resourceByPath(path.trim().replace(/^\/+|\/+$/g, '')) === Webhook) throw wrongParameter("resources: the changes of webhooks are never delivered to webhooks")
  }
  try {
    ChangeSelection.parse({ resources, filter: typeof rec.filter === 'string' ? rec.filter : '' })
  } catch (error) {
    if (error instanceof ApiError) throw new ApiError(error.code, `${Webhook.type}: ${error.message}`)
    throw error
  }
}

export const WEBHOOK_WRITE_CHECK: WriteCheck = {
  async values(call, values) {
    if (typeof values.url === 'string') await checkWebhookUrl(values.url, call.services.config.webhookAllowPrivate)
  },
  record(call, rec) {
    webhookUrl(String(rec.url), call.services.config.webhookAllowPrivate)
    checkSelection(rec)
  },
}

async function createWebhookRoute(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  // Before the address is looked up: a caller who may not create one learns nothing of it.
  if (!principal.superuser) throw accessDenied('only the account owner and admins manage webhooks')
  const { value, source } = parseObjectBody(call.request)
  const values = readFields(Webhook, value, source, true)
  await WEBHOOK_WRITE_CHECK.values(call, values)
  const secret = newToken()
  const rec = await tenant.write((tx) => {
    const created = createWebhook(tx, principal, values, secret, tx.state.seq)
    WEBHOOK_WRITE_CHECK.record(call, created)
    return created
  })
  const made = rec.secret === secret
  return objectAnswer(call, tenant, Webhook, rec, 201, made ? { secret } : undefined)
}

export const WEBHOOK_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([['Webhook:POST', { handle: (call: Call) => createWebhookRoute(call) }]])
