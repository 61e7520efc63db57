/*
 * The writes of webhooks (domain/operations/webhooks.ts), called directly:
 * a new webhook belongs to its creator, keeps a secret given or takes the
 * one made before the write, and starts its cursor at the entry before the
 * write; a delivery's outcome is one WebhookDelivery per event (a second
 * outcome updates it), moves the cursor only once the event is done, sets
 * or clears the failure, never gives the webhook a new version, and writes
 * nothing for a webhook that no longer delivers; the oldest deliveries past
 * MAX_DELIVERIES_KEPT go; noteWebhookState writes only a change.
 */
import t from 'tap'
import { createWebhook, deliveryIdOf, noteWebhookState, recordDelivery, type DeliveryOutcome } from '../../../src/domain/operations/webhooks.js'
import { updateObject } from '../../../src/domain/operations/updateObject.js'
import { Webhook } from '../../../src/domain/resources/webhook.js'
import { MAX_DELIVERIES_KEPT } from '../../../src/domain/resources/webhookDelivery.js'
import type { Rec } from '../../../src/domain/schema.js'
import { addUser, codeOf, domainTenant, NOW, type DomainTenant } from '../../helpers/domainState.js'

const URL = 'https://hooks.example.test/timeledger'
const MADE_SECRET = 'a-secret-made-by-the-route'

function outcome(event: string, status: DeliveryOutcome['status'], more: Partial<DeliveryOutcome> = {}): DeliveryOutcome {
  return {
    event,
    resource: 'time/timerecords',
    kind: 'created',
    objectId: 'object-id',
    status,
    attempts: 1,
    lastError: null,
    responseStatus: 200,
    firstAttemptAt: NOW,
    lastAttemptAt: NOW,
    nextAttemptAt: null,
    deliveredAt: null,
    ...more,
  }
}

function webhook(tenant: DomainTenant, seq = 41): Rec {
  return tenant.write((tx) => createWebhook(tx, tenant.owner, { url: URL }, MADE_SECRET, seq))
}

t.test('create: the creator’s, the made secret unless one is given, the cursor before this write', async (t) => {
  const tenant = domainTenant()
  const { owner, write } = tenant
  const made = webhook(tenant, 41)
  t.same([made.user, made.secret, made.deliveredEvent, made.failingSince, made.lastError, made.active], [owner.userId, MADE_SECRET, '41', null, null, true])
  const given = write((tx) => createWebhook(tx, owner, { url: URL, secret: 'a-secret-the-admin-chose' }, MADE_SECRET, 7))
  t.equal(given.secret, 'a-secret-the-admin-chose')
  t.equal(write((tx) => createWebhook(tx, owner, { url: URL, secret: '' }, MADE_SECRET, 7)).secret, MADE_SECRET, 'an empty one is none')
  t.equal(write((tx) => createWebhook(tx, owner, { url: URL, deliveredEvent: '999' }, MADE_SECRET, 7)).deliveredEvent, '7', 'a cursor in the values is not taken')
  const bob = addUser(tenant, 'bob@acme.test')
  t.equal(
    codeOf(() => write((tx) => createWebhook(tx, bob, { url: URL }, MADE_SECRET, 7))),
    'TL01-1008',
    'superusers only',
  )
})

t.test('an outcome: retrying keeps the cursor, done moves it; one delivery per event; the webhook’s version stays', async (t) => {
  const tenant = domainTenant()
  const { state, write } = tenant
  const hook = webhook(tenant)
  const id = deliveryIdOf(hook.id, '42')
  t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  t.not(deliveryIdOf(hook.id, '43'), id)
  t.equal(
    write((tx) => recordDelivery(tx, hook.id, outcome('42', 'retrying', { lastError: 'HTTP 500', responseStatus: 500, nextAttemptAt: NOW + 1_000 }))),
    true,
  )
  t.match(state.get('WebhookDelivery', id), { webhook: hook.id, event: '42', status: 'retrying', attempts: 1, version: 1 })
  t.match(state.get('Webhook', hook.id), { deliveredEvent: '41', failingSince: NOW, lastError: 'HTTP 500', version: hook.version }, 'failing, the cursor where it was')
  write((tx) => recordDelivery(tx, hook.id, outcome('42', 'delivered', { attempts: 2, deliveredAt: NOW + 1_000 })), NOW + 1_000)
  t.match(state.get('WebhookDelivery', id), { status: 'delivered', attempts: 2, version: 2, updatedAt: NOW + 1_000 }, 'the same delivery, updated')
  t.equal(state.collection('WebhookDelivery').size, 1)
  t.match(state.get('Webhook', hook.id), { deliveredEvent: '42', failingSince: null, lastError: null, version: hook.version, updatedAt: hook.updatedAt })
  write((tx) => recordDelivery(tx, hook.id, outcome('43', 'failed', { lastError: 'HTTP 410', attempts: 9 })))
  t.match(state.get('Webhook', hook.id), { deliveredEvent: '43', failingSince: null, lastError: 'event 43 failed for good: HTTP 410' }, 'failed for good: done, and said')
})

t.test('a webhook that no longer delivers: nothing written', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const hook = webhook(tenant)
  write((tx) => updateObject(tx, owner, Webhook, hook.id, { active: false }, 'any'))
  t.equal(
    write((tx) => recordDelivery(tx, hook.id, outcome('42', 'delivered'))),
    false,
  )
  t.equal(
    write((tx) => recordDelivery(tx, 'no-such-webhook', outcome('42', 'delivered'))),
    false,
  )
  t.equal(state.collection('WebhookDelivery').size, 0)
  t.equal(state.get('Webhook', hook.id)?.deliveredEvent, '41')
  write((tx) => noteWebhookState(tx, hook.id, 'paused: something', '50'))
  t.match(state.get('Webhook', hook.id), { deliveredEvent: '41', lastError: null })
})

t.test(`past ${MAX_DELIVERIES_KEPT} deliveries the oldest go, never the one just written`, async (t) => {
  const tenant = domainTenant()
  const { state, write } = tenant
  const hook = webhook(tenant)
  const other = webhook(tenant)
  write((tx) => recordDelivery(tx, other.id, outcome('1', 'delivered')), NOW - 1)
  write((tx) => {
    for (let event = 1; event <= MAX_DELIVERIES_KEPT; event += 1) recordDelivery(tx, hook.id, outcome(String(event), 'delivered'))
  })
  t.equal(state.collection('WebhookDelivery').size, MAX_DELIVERIES_KEPT + 1, 'up to the bound nothing goes')
  write((tx) => recordDelivery(tx, hook.id, outcome(String(MAX_DELIVERIES_KEPT + 1), 'delivered')), NOW + 1)
  t.equal(state.get('WebhookDelivery', deliveryIdOf(hook.id, '1')), undefined, 'the oldest went')
  t.ok(state.get('WebhookDelivery', deliveryIdOf(hook.id, '2')))
  t.ok(state.get('WebhookDelivery', deliveryIdOf(hook.id, String(MAX_DELIVERIES_KEPT + 1))), 'the new one is kept')
  t.ok(state.get('WebhookDelivery', deliveryIdOf(other.id, '1')), 'another webhook’s older one stays')
  t.equal(state.collection('WebhookDelivery').size, MAX_DELIVERIES_KEPT + 1)
  write((tx) => recordDelivery(tx, hook.id, outcome('0', 'delivered')), NOW - 10)
  t.ok(state.get('WebhookDelivery', deliveryIdOf(hook.id, '0')), 'one written at an earlier time than all the others is still kept')
})

t.test('noteWebhookState: the error and the cursor, written only when they change', async (t) => {
  const tenant = domainTenant()
  const { state, write } = tenant
  const hook = webhook(tenant)
  write((tx) => recordDelivery(tx, hook.id, outcome('42', 'retrying', { lastError: 'HTTP 503' })))
  write((tx) => noteWebhookState(tx, hook.id, 'paused: the user is not active'))
  t.match(state.get('Webhook', hook.id), { lastError: 'paused: the user is not active', failingSince: NOW, deliveredEvent: '41' }, 'without a cursor: the failure kept')
  write((tx) => noteWebhookState(tx, hook.id, 'history lost', '60'))
  t.match(state.get('Webhook', hook.id), { lastError: 'history lost', failingSince: null, deliveredEvent: '60' })
  const written = write((tx) => {
    noteWebhookState(tx, hook.id, 'history lost', '60')
    noteWebhookState(tx, hook.id, 'history lost')
    return tx.ops.length
  })
  t.equal(written, 0, 'what it already says: nothing written')
})
