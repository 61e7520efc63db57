/*
 * The writes of webhooks (resources/webhook.ts, resources/webhookDelivery.ts):
 *
 * Creating one, for a superuser: the caller becomes its `user`, the secret
 * is the one given or the one the route made before the write (random),
 * and the cursor `deliveredEvent` starts at the entry before this write's
 * (`seq`, the tenant's last logged entry), so a new webhook gets the events
 * of later writes only.
 *
 * A delivery's outcome, for the deliverer: the WebhookDelivery of the event
 * (its id derived from the webhook and the event, so a second outcome of
 * the same event updates it), the oldest deliveries past
 * MAX_DELIVERIES_KEPT removed for good in the same write, and the webhook's
 * delivery state: once an event is done (delivered, or failed for good) the
 * cursor moves past it. These write the webhook without a new version or
 * updatedAt: they are the server's bookkeeping, and an admin's PUT (which
 * must name the version) never conflicts with a delivery.
 */
import crypto from 'node:crypto'
import type { Caller } from '../caller.js'
import { insertRecord } from '../recordMaking.js'
import { Webhook } from '../resources/webhook.js'
import { MAX_DELIVERIES_KEPT, WebhookDelivery } from '../resources/webhookDelivery.js'
import type { Rec } from '../schema.js'
import type { Tx } from '../tx.js'
import { webhookDelivers } from '../webhooks.js'
import { createObject } from './createObject.js'

/** Creates a webhook from the values read from the request; `secret` is used when they give none. */
export function createWebhook(tx: Tx, caller: Caller, values: Record<string, unknown>, secret: string, seq: number): Rec {
  const given = typeof values.secret === 'string' && values.secret !== ''
  return createObject(tx, caller, Webhook, Object.assign({}, values, { secret: given ? values.secret : secret, deliveredEvent: String(seq), failingSince: null, lastError: null }))
}

type DeliveryStatus = 'delivered' | 'failed' | 'retrying'

/** What happened to one event, decided by the deliverer (times are its clock's). */
export interface DeliveryOutcome {
  readonly event: string
  readonly resource: string
  readonly kind: string
  readonly objectId: string
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly lastError: string | null
  readonly responseStatus: number | null
  readonly firstAttemptAt: number
  readonly lastAttemptAt: number
  readonly nextAttemptAt: number | null
  readonly deliveredAt: number | null
}

/** The id of the delivery of `event` to a webhook: a UUID-shaped digest of both. */
export function deliveryIdOf(webhookId: string, event: string): string {
  const hex = crypto.createHash('sha256').update(`${webhookId} ${event}`).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/** The webhook with its delivery state changed, same version (see the top). */
function putDeliveryState(tx: Tx, webhook: Rec, state: { deliveredEvent?: string; failingSince: number | null; lastError: string | null }): void {
  const after = { ...webhook, deliveredEvent: state.deliveredEvent ?? webhook.deliveredEvent, failingSince: state.failingSince, lastError: state.lastError }
  tx.put(Webhook.type, after)
}

/** Removes the oldest deliveries of the webhook past MAX_DELIVERIES_KEPT (`keep`: the one just written). */
function pruneDeliveries(tx: Tx, webhookId: string, keep: string): void {
  const collection = tx.state.collection(WebhookDelivery.type)
  const all = [...collection.lookup('webhook', webhookId)]
  if (all.length <= MAX_DELIVERIES_KEPT) return
  all.sort((a, b) => (a.createdAt as number) - (b.createdAt as number) || String(a.event).localeCompare(String(b.event)))
  for (const old of all.slice(0, all.length - MAX_DELIVERIES_KEPT)) {
    if (old.id === keep) continue
    if (typeof old.trashItem === 'string' && tx.state.get('TrashItem', old.trashItem) !== undefined) tx.del('TrashItem', old.trashItem)
    tx.del(WebhookDelivery.type, old.id)
  }
}

/**
 * Records an event's outcome and, when it is done, moves the cursor past it; false (nothing written) when the
 * webhook no longer delivers (removed, trashed, deactivated meanwhile).
 */
export function recordDelivery(tx: Tx, webhookId: string, outcome: DeliveryOutcome): boolean {
  const webhook = tx.state.get(Webhook.type, webhookId)
  if (!webhookDelivers(webhook)) return false
  const id = deliveryIdOf(webhookId, outcome.event)
  const values = {
    webhook: webhookId,
    event: outcome.event,
    resource: outcome.resource,
    kind: outcome.kind,
    objectId: outcome.objectId,
    status: outcome.status,
    attempts: outcome.attempts,
    lastError: outcome.lastError,
    responseStatus: outcome.responseStatus,
    firstAttemptAt: outcome.firstAttemptAt,
    lastAttemptAt: outcome.lastAttemptAt,
    nextAttemptAt: outcome.nextAttemptAt,
    deliveredAt: outcome.deliveredAt,
  }
  const before = tx.state.get(WebhookDelivery.type, id)
  if (before === undefined) {
    insertRecord(tx, WebhookDelivery, Object.assign({ id }, values))
    pruneDeliveries(tx, webhookId, id)
  } else {
    tx.put(WebhookDelivery.type, { ...before, ...values, version: (before.version as number) + 1, updatedAt: tx.now })
  }
  if (outcome.status === 'retrying') putDeliveryState(tx, webhook, { failingSince: outcome.firstAttemptAt, lastError: outcome.lastError })
  else
    putDeliveryState(tx, webhook, {
      deliveredEvent: outcome.event,
      failingSince: null,
      lastError: outcome.status === 'failed' ? `event ${outcome.event} failed for good: ${outcome.lastError ?? ''}` : null,
    })
  return true
}

/**
 * Sets the webhook's lastError (deliveries paused, or history lost) and, with `deliveredEvent`, moves its cursor
 * there; nothing when it already says so or no longer delivers.
 */
export function noteWebhookState(tx: Tx, webhookId: string, lastError: string | null, deliveredEvent?: string): void {
  const webhook = tx.state.get(Webhook.type, webhookId)
  if (!webhookDelivers(webhook)) return
  if (webhook.lastError === lastError && (deliveredEvent === undefined || deliveredEvent === webhook.deliveredEvent)) return
  putDeliveryState(tx, webhook, deliveredEvent === undefined ? { failingSince: webhook.failingSince as number | null, lastError } : { deliveredEvent, failingSince: null, lastError })
}
