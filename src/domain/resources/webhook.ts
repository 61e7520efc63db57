/*
 * Webhook: an address the tenant's changes are POSTed to, one event at a
 * time, in log order, signed with the webhook's secret (src/webhooks/ has
 * the deliverer, README "Webhooks" the protocol). Only superusers (the
 * account owner, admins) read or write webhooks.
 *
 * What a client writes: `url` (http or https), `resources` and `filter`
 * (the change feed's `resources=` and `$filter`, checked by the API as the
 * feed checks them), `secret` (write-only; made by the server when not
 * given and then shown once, in the create answer) and `active`. `user` is
 * the admin who created it: deliveries show what that user may see, and
 * pause while they are no longer an active superuser.
 *
 * Delivery state, kept by the server (read-only): `deliveredEvent`, the
 * event id (`<seq>.<op>`, or `<seq>` for a whole entry) up to which
 * deliveries are done — the outbox's cursor, tenant state like any field,
 * so it survives a crash and moves with the tenant; `failingSince` (the
 * first failed attempt of the event now being retried) and `lastError`.
 * The server changes these without a new version (operations/webhooks.ts),
 * so an admin's PUT never conflicts with a delivery.
 *
 * Every generic write of a webhook (create, PUT, PATCH, $set) passes its
 * write check (writeCheck.ts): `url` is http(s) and, unless
 * WEBHOOK_ALLOW_PRIVATE=1, neither is nor resolves to a private or loopback
 * address (webhookAddress.ts: the resolution before the write, the literal
 * inside it); `resources` and `filter` are what the change feed accepts,
 * checked on the record as stored, so a PUT that changes one is checked
 * against the other; webhooks' own records are never delivered, so
 * `resources` may not name them. All of it is 400 TL01-1105. A webhook that
 * delivers (webhooks.ts webhookDelivers) sets its tenant's `webhooks`
 * directory marker (globalFeed.ts): the deliverer loads those tenants.
 */
import { ApiError, wrongParameter } from '../errors.js'
import type { Rec } from '../record.js'
import { declareResource, field, size } from '../declare.js'
import { checkWebhookUrl, webhookUrl } from '../webhookAddress.js'
import { webhookDelivers } from '../webhooks.js'
import type { WriteCheckServices } from '../writeCheck.js'

export const Webhook = declareResource({
  type: 'Webhook',
  // Changes with every delivery (the cursor, the delivery log): never an event, or webhooks would feed themselves.
  changeEvents: 'never',
  path: 'webhooks',
  readRule: 'superuser',
  writeRule: 'superuser',
  description: "an address the tenant's changes are posted to, signed",
  displayName: (rec) => String(rec.url ?? ''),
  cascades: ['WebhookDelivery'],
  inner: [{ name: 'deliveries', childType: 'WebhookDelivery', via: 'webhook' }],
  directoryMarker: { marker: 'webhooks', sets: webhookDelivers },
  writeCheck: {
    async values(services, values) {
      if (typeof values.url === 'string') await checkWebhookUrl(values.url, services.allowPrivateAddresses)
    },
    record(services, rec) {
      webhookUrl(String(rec.url), services.allowPrivateAddresses)
      checkSelection(services, rec)
    },
  },
  fields: [
    field.string('url', 'where the events are POSTed (http or https; not a private or loopback address)', { required: true, inStub: true, constraints: [size(8, 2048)] }),
    field.string('resources', "comma-separated resource paths whose changes are sent (as the change feed's resources=); empty: every resource"),
    field.string('filter', "a $filter on the objects (as the change feed's $filter; needs resources)"),
    field.string('secret', 'the key of the HMAC-SHA256 signature; made by the server when not given, and then shown once', { access: 'WRITE_ONLY', constraints: [size(16, 256)] }),
    field.boolean('active', 'whether events are delivered', { defaultValue: true }),
    field.ref('user', 'User', 'the admin who created the webhook: events show what this user may see', { required: true, access: 'READ_ONLY' }),
    field.string('deliveredEvent', 'the event id up to which deliveries are done (delivered, or failed for good)', { access: 'READ_ONLY' }),
    field.date('failingSince', 'when the first attempt failed of the event being retried; null when none fails', { access: 'READ_ONLY' }),
    field.string('lastError', 'why the last attempt failed, or why deliveries are paused', { access: 'READ_ONLY' }),
  ],
})

/** `resources` and `filter` as the change feed accepts them, never naming webhooks themselves. */
function checkSelection(services: WriteCheckServices, rec: Rec): void {
  const resources = typeof rec.resources === 'string' ? rec.resources : ''
  const ownPaths = [Webhook.path, ...Webhook.aliases]
  for (const path of resources.split(',')) {
    if (ownPaths.includes(path.trim().replace(/^\/+|\/+$/g, ''))) throw wrongParameter('resources: the changes of webhooks are never delivered to webhooks')
  }
  try {
    services.checkChangeSelection(resources, typeof rec.filter === 'string' ? rec.filter : '')
  } catch (error) {
    if (error instanceof ApiError) throw new ApiError(error.code, `${Webhook.type}: ${error.message}`)
    throw error
  }
}
