/*
 * What the resources feed outside their tenant, read from the declarations
 * alone (domain/globalFeedChanges.ts): a small resource declared here, Badge,
 * feeds a global index (its `code`, while it is not revoked) and sets a
 * directory marker (while it `shines`), and the reader says what a write or
 * a whole state means for them without naming it; the declarations of the
 * service feed each table and marker once (domain/resources/index.ts checks
 * it at load); and the service's own declarations say what
 * tenants/globalIndexes.ts used to say itself.
 */
import t from 'tap'
import { GlobalFeeds, type WrittenRecords } from '../../../src/domain/globalFeedChanges.js'
import { checkFeedsAndWriteOptions, RESOURCES } from '../../../src/domain/resources/index.js'
import { PasswordConfirmation } from '../../../src/domain/resources/passwordConfirmation.js'
import { User } from '../../../src/domain/resources/user.js'
import { Webhook } from '../../../src/domain/resources/webhook.js'
import type { Rec, ResourceDecl } from '../../../src/domain/schema.js'
import { declareResource, field } from '../../../src/domain/declare.js'
import type { StateView } from '../../../src/domain/tx.js'
import { addUser, domainTenant } from '../../helpers/domainState.js'

const Badge = declareResource({
  type: 'Badge',
  path: 'badges',
  description: 'a badge (declared by this test)',
  displayName: (rec) => String(rec.code),
  globalIndex: {
    table: 'emails',
    keyOf: (rec) => (typeof rec.code === 'string' ? rec.code : null),
    heldIn: (state, key) => [...state.collection('Badge').values()].some((rec) => rec.code === key && rec.revoked !== true),
  },
  directoryMarker: { marker: 'webhooks', sets: (rec) => rec.shines === true },
  fields: [field.string('code', 'the key it is filed under'), field.boolean('revoked', 'no longer held'), field.boolean('shines', 'sets the marker')],
})

function badge(id: string, values: Record<string, unknown>): Rec {
  return { id, version: 1, createdAt: 0, updatedAt: 0, trashItem: null, ...values }
}

/** A state of badges alone, as a StateView. */
function badgeState(badges: Rec[]): StateView {
  const byId = new Map(badges.map((rec) => [rec.id, rec]))
  const records = {
    get size() {
      return byId.size
    },
    values: () => byId.values(),
    lookup: () => [],
  }
  return {
    tenant: 'acme',
    collection: (type) => (type === 'Badge' ? records : { size: 0, values: () => new Map<string, Rec>().values(), lookup: () => [] }),
    collections: new Map([['Badge', records]]),
    get: (type, id) => (type === 'Badge' ? byId.get(id) : undefined),
    displayNameOf: () => '',
  }
}

/** A write that turned `before` into `after` by `ops` (the records it replaced or removed are `before`'s). */
function written(before: Rec[], after: Rec[], ops: WrittenRecords['ops']): WrittenRecords {
  const old = new Map(before.map((rec) => [rec.id, rec]))
  const previous = ops.flatMap((op) => {
    const rec = old.get(op.op === 'put' ? op.rec.id : op.id)
    return op.type === 'Badge' && rec !== undefined ? [rec] : []
  })
  return { ops, state: badgeState(after), previousRecords: (type) => (type === 'Badge' ? previous : []) }
}

function keysWritten(feeds: GlobalFeeds, write: WrittenRecords): string[] {
  const seen: string[] = []
  feeds.forEachKeyWritten(write, (table, key, held) => seen.push(`${table} ${key} ${held}`))
  return seen.sort()
}

function markersTurned(feeds: GlobalFeeds, write: WrittenRecords): string[] {
  const seen: string[] = []
  feeds.forEachMarkerTurned(write, (marker, on) => seen.push(`${marker} ${on}`))
  return seen
}

t.test('a declared resource feeds its global index: every key a written record had or has, asked of the state after', async (t) => {
  const feeds = new GlobalFeeds([Badge])
  const a = badge('b1', { code: 'gold' })
  t.same(keysWritten(feeds, written([], [a], [{ op: 'put', type: 'Badge', rec: a }])), ['emails gold true'], 'a new record files its key')
  const renamed = { ...a, code: 'silver' }
  t.same(
    keysWritten(feeds, written([a], [renamed], [{ op: 'put', type: 'Badge', rec: renamed }])),
    ['emails gold false', 'emails silver true'],
    'a changed key: the old one dropped, the new one filed',
  )
  const revoked = { ...a, revoked: true }
  t.same(keysWritten(feeds, written([a], [revoked], [{ op: 'put', type: 'Badge', rec: revoked }])), ['emails gold false'], 'the state no longer holds it')
  const twin = badge('b2', { code: 'gold' })
  t.same(keysWritten(feeds, written([a, twin], [twin], [{ op: 'del', type: 'Badge', id: 'b1' }])), ['emails gold true'], 'a removal: the key stays while another record holds it')
  t.same(keysWritten(feeds, written([a], [], [{ op: 'del', type: 'Badge', id: 'b1' }])), ['emails gold false'], 'a removal of the last one drops it')
  const plain = badge('b3', {})
  t.same(keysWritten(feeds, written([], [plain], [{ op: 'put', type: 'Badge', rec: plain }])), [], 'a record without a key files none')
  t.same(keysWritten(feeds, written([], [a], [{ op: 'put', type: 'Other', rec: a }])), [], 'a write of another type feeds nothing')
  t.same(keysWritten(new GlobalFeeds([]), written([], [a], [{ op: 'put', type: 'Badge', rec: a }])), [], 'a resource declared without a feed feeds nothing')
})

t.test('a declared resource sets its directory marker: only a write that turned the predicate of a record it wrote', async (t) => {
  const feeds = new GlobalFeeds([Badge])
  const dull = badge('b1', { code: 'gold' })
  const shining = { ...dull, shines: true }
  t.same(markersTurned(feeds, written([], [dull], [{ op: 'put', type: 'Badge', rec: dull }])), [], 'a record that does not set it')
  t.same(markersTurned(feeds, written([dull], [shining], [{ op: 'put', type: 'Badge', rec: shining }])), ['webhooks true'])
  const renamed = { ...shining, code: 'silver' }
  t.same(markersTurned(feeds, written([shining], [renamed], [{ op: 'put', type: 'Badge', rec: renamed }])), [], 'a change that keeps the predicate')
  const other = badge('b2', { shines: true })
  t.same(markersTurned(feeds, written([shining, other], [other], [{ op: 'del', type: 'Badge', id: 'b1' }])), ['webhooks true'], 'turned for one record, still set by another')
  t.same(markersTurned(feeds, written([shining], [], [{ op: 'del', type: 'Badge', id: 'b1' }])), ['webhooks false'])
})

t.test('a whole state: the keys it holds per table and its markers', async (t) => {
  const feeds = new GlobalFeeds([Badge])
  const state = badgeState([badge('b1', { code: 'gold' }), badge('b2', { code: 'tin', revoked: true }), badge('b3', { shines: true })])
  const keys = feeds.keysOf(state)
  t.same([[...keys.emails], [...keys.confirmations]], [['gold'], []], 'a table nothing here feeds is empty')
  t.same(feeds.markersOf(state), { webhooks: true })
  t.same(feeds.markersOf(badgeState([badge('b1', {})])), { webhooks: false })
})

t.test('each table and marker is fed by exactly one declaration (checked at load)', async (t) => {
  t.doesNotThrow(() => checkFeedsAndWriteOptions(RESOURCES))
  const without = (decl: ResourceDecl) => RESOURCES.filter((other) => other !== decl)
  t.throws(() => checkFeedsAndWriteOptions(without(User)), /global index emails is fed by no resource/)
  t.throws(() => checkFeedsAndWriteOptions([...RESOURCES, Badge]), /global index emails is fed by User, Badge: it needs exactly one/)
  t.throws(() => checkFeedsAndWriteOptions(without(Webhook)), /directory marker webhooks is set by no resource/)
  t.throws(() => checkFeedsAndWriteOptions(without(PasswordConfirmation)), /global index confirmations is fed by no resource/)
})

t.test('the service’s declarations: live users’ e-mails, pending confirmations, webhooks that deliver', async (t) => {
  const tenant = domainTenant()
  const feeds = new GlobalFeeds(RESOURCES)
  addUser(tenant, 'Bob@Acme.test')
  const keys = feeds.keysOf(tenant.state)
  t.same([...keys.emails].sort(), ['bob@acme.test', 'olga@acme.test'])
  t.same(feeds.markersOf(tenant.state), { webhooks: false })
  t.equal(User.globalIndex?.keyOf({ ...badge('u', {}), email: 'x'.repeat(300) }), null, 'an e-mail too long to be a key is filed under none')
})
