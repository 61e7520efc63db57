/*
 * A login (domain/operations/login.ts), called directly: the read finds the
 * live user by e-mail (a trashed one is ignored), or with an empty password
 * the owner of a secret key; the write after the password check refuses a
 * user whose password changed meanwhile, a removed or expired key, an
 * inactive user (401 TL01-1001), stores a re-hash without a new version,
 * drops expired tokens and issues a pair.
 */
import t from 'tap'
import { secretId } from '../../../src/domain/credentials.js'
import { deleteObject } from '../../../src/domain/operations/deleteObject.js'
import { findCandidate, signIn, type Candidate } from '../../../src/domain/operations/login.js'
import { createSecretKey, removeOwnSecretKey } from '../../../src/domain/operations/secretKeys.js'
import { issueTokens } from '../../../src/domain/operations/tokens.js'
import { updateObject } from '../../../src/domain/operations/updateObject.js'
import { User } from '../../../src/domain/resources/user.js'
import type { Rec } from '../../../src/domain/schema.js'
import { addUser, codeOf, domainTenant, NOW } from '../../helpers/domainState.js'

const LIFETIMES = { accessMs: 60_000, refreshMs: 600_000 }

t.test('the candidate: a live user by e-mail, or the owner of a key with an empty password', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  t.same(findCandidate(state, { user: 'Bob@acme.test', password: 'pw' }, 'bob@acme.test'), { user: state.get('User', bob.userId), keyId: null })
  t.equal(findCandidate(state, { user: 'nobody@acme.test', password: 'pw' }, 'nobody@acme.test'), undefined)
  const key = write((tx) => createSecretKey(tx, bob, { name: 'ci' }, 'bobs-secret-key-text'))
  t.same(findCandidate(state, { user: 'bobs-secret-key-text', password: '' }, 'bobs-secret-key-text'), { user: state.get('User', bob.userId), keyId: key.id })
  t.equal(findCandidate(state, { user: 'bobs-secret-key-text', password: 'pw' }, 'bobs-secret-key-text'), undefined, 'a key only with an empty password')
  t.equal(findCandidate(state, { user: 'another-key-text', password: '' }, 'another-key-text'), undefined)
  write((tx) => deleteObject(tx, owner, User, bob.userId, false))
  t.equal(findCandidate(state, { user: 'bob@acme.test', password: 'pw' }, 'bob@acme.test'), undefined, 'a trashed user is ignored')
})

t.test('the write: tokens issued, expired ones dropped, a re-hash stored without a new version', async (t) => {
  const tenant = domainTenant()
  const { state, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const old = write((tx) => issueTokens(tx, bob.userId, LIFETIMES))
  const candidate = findCandidate(state, { user: 'bob@acme.test', password: 'pw' }, 'bob@acme.test') as Candidate
  const before = state.get('User', bob.userId) as Rec
  const later = NOW + 10 * 600_000
  const issued = write((tx) => signIn(tx, candidate, 'a-newer-hash-of-the-password', LIFETIMES), later)
  t.same([state.get('AuthToken', secretId(issued.token))?.user, issued.expiration.ms], [bob.userId, later + 60_000])
  t.equal(state.get('AuthToken', secretId(old.refreshToken)), undefined, 'the expired tokens are dropped')
  const after = state.get('User', bob.userId) as Rec
  t.same([after.password, after.version, after.updatedAt], ['a-newer-hash-of-the-password', before.version, before.updatedAt], 'the new hash, as the same version')
  write((tx) => signIn(tx, candidate, null, LIFETIMES))
  t.equal(
    state.get('User', bob.userId)?.password,
    'a-newer-hash-of-the-password',
    'a check verified against the older hash at the same version: still the same password, and no re-hash over the newer one',
  )
  write((tx) => signIn(tx, candidate, 'a-third-hash', LIFETIMES))
  t.equal(state.get('User', bob.userId)?.password, 'a-newer-hash-of-the-password', 'a re-hash of a hash no longer stored is not stored')
})

t.test('the write: refused when the password changed, the user cannot sign in, the key went or expired', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const carol = addUser(tenant, 'carol@acme.test')
  const tokens = () => state.collection('AuthToken').size
  const bobCandidate = findCandidate(state, { user: 'bob@acme.test', password: 'pw' }, 'bob@acme.test') as Candidate
  write((tx) => updateObject(tx, owner, User, bob.userId, { password: 'a-reset-password-hash' }, 'any'))
  t.equal(
    codeOf(() => write((tx) => signIn(tx, bobCandidate, null, LIFETIMES))),
    'TL01-1001',
    'the password changed since the check',
  )
  const carolCandidate = findCandidate(state, { user: 'carol@acme.test', password: 'pw' }, 'carol@acme.test') as Candidate
  write((tx) => updateObject(tx, owner, User, carol.userId, { active: false }, 'any'))
  t.equal(
    codeOf(() => write((tx) => signIn(tx, carolCandidate, null, LIFETIMES))),
    'TL01-1001',
    'an inactive user',
  )
  t.equal(tokens(), 0, 'no token issued')

  const expiring = write((tx) => createSecretKey(tx, owner, { name: 'expiring', expiration: NOW + 1_000 }, 'expiring-key-text'))
  const byKey = findCandidate(state, { user: 'expiring-key-text', password: '' }, 'expiring-key-text') as Candidate
  t.equal(byKey.keyId, expiring.id)
  t.ok(write((tx) => signIn(tx, byKey, null, LIFETIMES), NOW + 999).token, 'before its expiration')
  t.equal(
    codeOf(() => write((tx) => signIn(tx, byKey, null, LIFETIMES), NOW + 1_000)),
    'TL01-1001',
    'at its expiration',
  )
  write((tx) => removeOwnSecretKey(tx, owner, expiring.id))
  t.equal(
    codeOf(() => write((tx) => signIn(tx, byKey, null, LIFETIMES), NOW)),
    'TL01-1001',
    'a key removed since the read',
  )
})
