/*
 * WebhookDelivery: the log of one event's delivery to a webhook (read-only
 * over the API: `webhookdeliveries`, or `webhooks/{id}/deliveries`). The
 * deliverer (src/webhooks/) writes it with the webhook's cursor after a 2xx,
 * after the last failed attempt (`failed`), and after failed attempts while
 * it retries (`retrying`). The newest MAX_DELIVERIES_KEPT per webhook are
 * kept: the write that adds one removes the oldest past that.
 */
import { declareResource, field, oneOf } from '../declare.js'

/** The deliveries kept per webhook. */
export const MAX_DELIVERIES_KEPT = 1000

/** The statuses of a delivery. */
const DELIVERY_STATUSES = ['delivered', 'failed', 'retrying'] as const

export const WebhookDelivery = declareResource({
  type: 'WebhookDelivery',
  // Changes with every delivery (the cursor, the delivery log): never an event, or webhooks would feed themselves.
  changeEvents: 'never',
  path: 'webhookdeliveries',
  readRule: 'superuser',
  writeRule: 'superuser',
  creatable: false,
  updatable: false,
  removable: false,
  description: `the delivery of one event to a webhook (the newest ${MAX_DELIVERIES_KEPT} per webhook are kept)`,
  displayName: (rec) => `${String(rec.event ?? '')} ${String(rec.status ?? '')}`,
  fields: [
    field.ref('webhook', 'Webhook', 'the webhook', { required: true, access: 'READ_ONLY' }),
    field.string('event', 'the event id <seq>.<op>', { access: 'READ_ONLY', inStub: true }),
    field.string('resource', "the event's resource path", { access: 'READ_ONLY' }),
    field.string('kind', 'created, updated, deleted, restored or removed', { access: 'READ_ONLY' }),
    field.string('objectId', 'the id of the changed object', { access: 'READ_ONLY' }),
    field.string('status', 'delivered, failed (given up after the retry limit) or retrying', { access: 'READ_ONLY', constraints: [oneOf(...DELIVERY_STATUSES)] }),
    field.integer('attempts', 'attempts made', { access: 'READ_ONLY' }),
    field.string('lastError', 'why the last attempt failed', { access: 'READ_ONLY' }),
    field.integer('responseStatus', "the receiver's last HTTP status; null when none answered", { access: 'READ_ONLY' }),
    field.date('firstAttemptAt', 'when the first attempt was made', { access: 'READ_ONLY' }),
    field.date('lastAttemptAt', 'when the last attempt was made', { access: 'READ_ONLY' }),
    field.date('nextAttemptAt', 'when the next attempt is due; null when none is', { access: 'READ_ONLY' }),
    field.date('deliveredAt', 'when the receiver accepted the event (2xx)', { access: 'READ_ONLY' }),
  ],
})
