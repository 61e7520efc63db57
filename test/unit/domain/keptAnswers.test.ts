/*
 * The kept answers of Idempotency-Keys, called directly: found for their
 * user and key only, until their lifetime ends; replaced once expired; and
 * bounded per tenant, a write past the bound removing the expired ones and
 * then the oldest, down to nine tenths of it, never the one it keeps.
 */
import t from 'tap'
import { keepAnswer, keptAnswerOf, type Answer } from '../../../src/domain/operations/keptAnswers.js'
import { domainTenant, NOW } from '../../helpers/domainState.js'

const answer = (body: string): Answer => ({ status: 201, contentType: 'application/json', location: null, etag: null, body })
const LIMITS = { lifetimeMs: 60_000, perTenant: 10 }

t.test('found for its user and key, until it expires', async (t) => {
  const { state, write } = domainTenant()
  write((tx) => keepAnswer(tx, 'user-a', 'key-1', 'fingerprint-1', answer('{"id":"1"}'), LIMITS))
  t.match(keptAnswerOf(state, 'user-a', 'key-1', NOW, LIMITS.lifetimeMs), { fingerprint: 'fingerprint-1', status: 201, body: '{"id":"1"}', location: null })
  t.equal(keptAnswerOf(state, 'user-b', 'key-1', NOW, LIMITS.lifetimeMs), null, 'another user’s key')
  t.equal(keptAnswerOf(state, 'user-a', 'key-2', NOW, LIMITS.lifetimeMs), null, 'another key')
  t.ok(keptAnswerOf(state, 'user-a', 'key-1', NOW + LIMITS.lifetimeMs - 1, LIMITS.lifetimeMs), 'within its lifetime')
  t.equal(keptAnswerOf(state, 'user-a', 'key-1', NOW + LIMITS.lifetimeMs, LIMITS.lifetimeMs), null, 'past it')
  write((tx) => keepAnswer(tx, 'user-a', 'key-1', 'fingerprint-2', answer('{"id":"2"}'), LIMITS), NOW + LIMITS.lifetimeMs)
  t.match(keptAnswerOf(state, 'user-a', 'key-1', NOW + LIMITS.lifetimeMs, LIMITS.lifetimeMs), { fingerprint: 'fingerprint-2' }, 'an expired key is kept anew')
  t.equal(state.collection('KeptAnswer').size, 1)
})

t.test('bounded per tenant: the expired, then the oldest go first', async (t) => {
  const { state, write } = domainTenant()
  for (let index = 1; index <= 10; index += 1) write((tx) => keepAnswer(tx, 'user', `key-${index}`, 'f', answer(`${index}`), LIMITS), NOW + index)
  t.equal(state.collection('KeptAnswer').size, 10, 'up to the bound nothing goes')
  write((tx) => keepAnswer(tx, 'user', 'key-11', 'f', answer('11'), LIMITS), NOW + 11)
  t.equal(state.collection('KeptAnswer').size, 9, 'past it, down to nine tenths')
  const at = NOW + 11
  t.same(
    [1, 2, 3, 11].map((index) => keptAnswerOf(state, 'user', `key-${index}`, at, LIMITS.lifetimeMs) !== null),
    [false, false, true, true],
    'the two oldest went, the new one stays',
  )
  // Later, key-3 to key-8 have expired: a write past the bound removes them all, more than its excess of two.
  const later = NOW + 8 + LIMITS.lifetimeMs
  write((tx) => keepAnswer(tx, 'other', 'key-x', 'f', answer('x'), LIMITS), later)
  t.equal(state.collection('KeptAnswer').size, 10, 'at the bound: nothing swept yet')
  write((tx) => keepAnswer(tx, 'other', 'key-y', 'f', answer('y'), LIMITS), later)
  t.equal(state.collection('KeptAnswer').size, 5, 'the six expired went')
  t.same(
    ['key-9', 'key-10', 'key-11'].map((key) => keptAnswerOf(state, 'user', key, later, LIMITS.lifetimeMs) !== null),
    [true, true, true],
    'those not expired stay',
  )
})
