/*
 * The caller's sessions (domain/operations/accessTokens.ts), called
 * directly: the list shows the caller's own usable sessions only, oldest
 * first, named by a public id that is neither the token nor its hash; a
 * session whose access token expired is listed while its refresh token
 * works; revoking removes both tokens of that session and nothing else,
 * says whether it was the current one, and finds no other user's session.
 */
import t from 'tap'
import { secretId } from '../../../src/domain/credentials.js'
import { accessTokenPublicId, listAccessTokens, revokeAccessToken } from '../../../src/domain/operations/accessTokens.js'
import { issueTokens, refreshTokens } from '../../../src/domain/operations/tokens.js'
import { addUser, codeOf, domainTenant, NOW } from '../../helpers/domainState.js'

const LIFETIMES = { accessMs: 60_000, refreshMs: 600_000 }

t.test('list: the caller’s usable sessions, oldest first, the current one marked', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const first = write((tx) => issueTokens(tx, owner.userId, LIFETIMES), NOW + 2)
  const second = write((tx) => issueTokens(tx, owner.userId, LIFETIMES), NOW + 1)
  write((tx) => issueTokens(tx, bob.userId, LIFETIMES))
  const caller = { ...owner, tokenId: secretId(first.token) }
  const listed = listAccessTokens(state, caller, NOW + 10)
  t.same(
    listed.map((view) => view.id),
    [accessTokenPublicId(secretId(second.token)), accessTokenPublicId(secretId(first.token))],
    'only the owner’s two, the older first',
  )
  t.same(
    listed.map((view) => [view.current, view.displayName]),
    [
      [false, 'session'],
      [true, 'current session'],
    ],
  )
  t.same(
    listed.map((view) => [view.createdAt.ms, view.expiration.ms, view.refreshExpiration?.ms]),
    [
      [NOW + 1, NOW + 1 + 60_000, NOW + 1 + 600_000],
      [NOW + 2, NOW + 2 + 60_000, NOW + 2 + 600_000],
    ],
  )
  for (const view of listed) t.not(view.id, secretId(first.token), 'the public id is not the token’s hash')
  t.equal(listAccessTokens(state, bob, NOW + 10).length, 1, 'bob sees his one session')
})

t.test('list: an expired access token is listed while its refresh token works; a used refresh token shows as none', async (t) => {
  const { state, owner, write } = domainTenant()
  const issued = write((tx) => issueTokens(tx, owner.userId, LIFETIMES))
  const past = NOW + 120_000
  t.same(
    listAccessTokens(state, owner, past).map((view) => view.id),
    [accessTokenPublicId(secretId(issued.token))],
    'the refresh token still works',
  )
  t.same(listAccessTokens(state, owner, NOW + 600_000), [], 'both expired: not listed')
  const other = write((tx) => issueTokens(tx, owner.userId, LIFETIMES))
  write((tx) => refreshTokens(tx, other.refreshToken, LIFETIMES), NOW + 30_000)
  const oldSession = listAccessTokens(state, owner, NOW + 30_001).find((view) => view.id === accessTokenPublicId(secretId(other.token)))
  t.equal(oldSession?.refreshExpiration, null, 'its refresh token was used: the access token alone is left')
})

t.test('revoke: both tokens of that session go, the others stay; the current one is said', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const kept = write((tx) => issueTokens(tx, owner.userId, LIFETIMES))
  const ended = write((tx) => issueTokens(tx, owner.userId, LIFETIMES))
  const bobs = write((tx) => issueTokens(tx, bob.userId, LIFETIMES))
  const caller = { ...owner, tokenId: secretId(kept.token) }
  t.same(
    write((tx) => revokeAccessToken(tx, caller, accessTokenPublicId(secretId(ended.token)))),
    { current: false },
  )
  t.equal(state.get('AuthToken', secretId(ended.token)), undefined, 'the access token is gone')
  t.equal(state.get('AuthToken', secretId(ended.refreshToken)), undefined, 'and its refresh token')
  t.ok(state.get('AuthToken', secretId(kept.refreshToken)), 'the other session stays')
  t.equal(
    codeOf(() => write((tx) => revokeAccessToken(tx, caller, accessTokenPublicId(secretId(bobs.token))))),
    'TL01-1101',
    'another user’s session is not found',
  )
  t.ok(state.get('AuthToken', secretId(bobs.token)), 'and stays')
  t.equal(
    codeOf(() => write((tx) => revokeAccessToken(tx, caller, accessTokenPublicId(secretId(kept.refreshToken))))),
    'TL01-1101',
    'a refresh token is no session',
  )
  t.equal(
    codeOf(() => write((tx) => revokeAccessToken(tx, caller, secretId(kept.token)))),
    'TL01-1101',
    'the hash is not the public id',
  )
  t.same(
    write((tx) => revokeAccessToken(tx, caller, accessTokenPublicId(secretId(kept.token)))),
    { current: true },
    'the current one: a logout',
  )
  t.same(listAccessTokens(state, caller, NOW), [])
})
