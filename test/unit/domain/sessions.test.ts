/*
 * Tokens and the password change, called directly on a WriteTx: the stored
 * AuthTokens and PasswordConfirmations keep exactly the fields (and their
 * order) they had when they were written by hand; a refresh token works
 * once; ending a session ends its pair only; a password change ends every
 * other session of the user, and a reset by mail also removes the user's
 * secret keys.
 */
import t from 'tap'
import { secretId } from '../../../src/domain/credentials.js'
import { changePassword, confirmByEmail, confirmForUser } from '../../../src/domain/operations/passwordChange.js'
import { createSecretKey } from '../../../src/domain/operations/secretKeys.js'
import { dropExpiredTokens, endSession, issueTokens, refreshTokens } from '../../../src/domain/operations/tokens.js'
import type { Rec } from '../../../src/domain/schema.js'
import { domainTenant, NOW } from '../../helpers/domainState.js'

const LIFETIMES = { accessMs: 60_000, refreshMs: 600_000 }

function tokensOf(state: { collection(type: string): { lookup(field: string, value: unknown): Iterable<Rec> } }, userId: string): Rec[] {
  return [...state.collection('AuthToken').lookup('user', userId)]
}

t.test('issue: an access and a refresh token, stored by hash with the fields they always had', async (t) => {
  const { state, owner, write } = domainTenant()
  const issued = write((tx) => issueTokens(tx, owner.userId, LIFETIMES), NOW + 1)
  const access = state.get('AuthToken', secretId(issued.token)) as Rec
  const refresh = state.get('AuthToken', secretId(issued.refreshToken)) as Rec
  t.same(
    Object.entries(access),
    Object.entries({ id: secretId(issued.token), version: 1, createdAt: NOW + 1, updatedAt: NOW + 1, trashItem: null, user: owner.userId, kind: 'access', expiresAt: NOW + 1 + 60_000, pairId: null }),
  )
  t.same(
    Object.entries(refresh),
    Object.entries({
      id: secretId(issued.refreshToken),
      version: 1,
      createdAt: NOW + 1,
      updatedAt: NOW + 1,
      trashItem: null,
      user: owner.userId,
      kind: 'refresh',
      expiresAt: NOW + 1 + 600_000,
      pairId: access.id,
    }),
  )
  t.equal(issued.expiration.ms, NOW + 1 + 60_000)
})

t.test('refresh: the refresh token works once; expired tokens are dropped', async (t) => {
  const { state, owner, write } = domainTenant()
  const first = write((tx) => issueTokens(tx, owner.userId, LIFETIMES))
  const second = write((tx) => refreshTokens(tx, first.refreshToken, LIFETIMES), NOW + 120_000)
  t.equal(state.get('AuthToken', secretId(first.refreshToken)), undefined, 'consumed')
  t.equal(state.get('AuthToken', secretId(first.token)), undefined, 'the expired access token was dropped')
  t.ok(state.get('AuthToken', secretId(second.token)))
  t.throws(() => write((tx) => refreshTokens(tx, first.refreshToken, LIFETIMES)), { code: 'TL01-1011' }, 'a second use is refused')
  write((tx) => dropExpiredTokens(tx, owner.userId), NOW + 10_000_000)
  t.same(tokensOf(state, owner.userId), [], 'all expired by then')
})

t.test('ending a session removes its pair and no other token', async (t) => {
  const { state, owner, write } = domainTenant()
  const kept = write((tx) => issueTokens(tx, owner.userId, LIFETIMES))
  const ended = write((tx) => issueTokens(tx, owner.userId, LIFETIMES))
  write((tx) => endSession(tx, owner.userId, secretId(ended.token)))
  t.same(
    tokensOf(state, owner.userId)
      .map((rec) => rec.id)
      .sort(),
    [secretId(kept.token), secretId(kept.refreshToken)].sort(),
  )
})

t.test('a password change asked for in a session ends every other session of the user', async (t) => {
  const { state, owner, write } = domainTenant()
  const asking = write((tx) => issueTokens(tx, owner.userId, LIFETIMES))
  const other = write((tx) => issueTokens(tx, owner.userId, LIFETIMES))
  const unproven = { ...owner, tokenId: secretId(asking.token) }
  t.throws(() => write((tx) => confirmForUser(tx, unproven, owner.userId, 'confirmation-id', 60_000, true)), { code: 'TL01-1008' }, 'not without the current password')
  const user = state.get('User', owner.userId) as Rec
  const session = { ...unproven, knownPassword: { userId: owner.userId, hash: user.password as string, version: user.version } }
  const email = write((tx) => confirmForUser(tx, session, owner.userId, 'confirmation-id', 60_000, true))
  t.equal(email, 'olga@acme.test')
  const confirmation = state.get('PasswordConfirmation', secretId('confirmation-id')) as Rec
  t.same(
    Object.entries(confirmation),
    Object.entries({ id: secretId('confirmation-id'), version: 1, createdAt: NOW, updatedAt: NOW, trashItem: null, user: owner.userId, expiresAt: NOW + 60_000, keepTokenId: session.tokenId }),
  )
  write((tx) => createSecretKey(tx, owner, { name: 'ci' }, 'a-secret-key-text'))
  const changed = write((tx) => changePassword(tx, secretId('confirmation-id'), 'the-new-hash'))
  t.equal(changed?.password, 'the-new-hash')
  const left = tokensOf(state, owner.userId)
    .map((rec) => rec.id)
    .sort()
  t.same(left, [secretId(asking.token), secretId(asking.refreshToken)].sort(), 'the asking session stays, the other ends')
  t.equal(state.get('AuthToken', secretId(other.token)), undefined)
  t.equal([...state.collection('SecretKey').values()].length, 1, 'secret keys stay when the user asked in a session')
  t.equal(
    write((tx) => changePassword(tx, secretId('confirmation-id'), 'again')),
    null,
    'a confirmation works once',
  )
})

t.test('a reset by mail ends every session and removes the secret keys', async (t) => {
  const { state, owner, write } = domainTenant()
  write((tx) => issueTokens(tx, owner.userId, LIFETIMES))
  write((tx) => createSecretKey(tx, owner, { name: 'ci' }, 'a-secret-key-text'))
  t.equal(
    write((tx) => confirmByEmail(tx, 'nobody@acme.test', 'mailed-id', 60_000)),
    false,
    'no user with that address',
  )
  t.equal(
    write((tx) => confirmByEmail(tx, 'olga@acme.test', 'mailed-id', 60_000)),
    true,
  )
  t.equal(
    write((tx) => changePassword(tx, secretId('mailed-id'), 'x'), NOW + 60_000),
    null,
    'an expired confirmation is refused',
  )
  t.equal(state.get('PasswordConfirmation', secretId('mailed-id')), undefined, 'and consumed')
  write((tx) => confirmByEmail(tx, 'olga@acme.test', 'mailed-id', 60_000))
  t.ok(write((tx) => changePassword(tx, secretId('mailed-id'), 'the-new-hash')))
  t.same(tokensOf(state, owner.userId), [])
  t.equal([...state.collection('SecretKey').values()].length, 0)
})
