/*
 * Who an access token signs in (domain/operations/tokens.ts
 * userOfAccessToken, the rule http/authenticate.ts asks of every request),
 * called directly: an access token until it expires, of a user who is
 * active and outside the trash; a refresh token, an unknown or expired one,
 * or one of a deactivated or trashed user is 401 TL01-1010. And what a
 * signed-in user may do (domain/caller.ts callerOfUser): the account owner
 * and admins are superusers.
 */
import t from 'tap'
import { callerOfUser } from '../../../src/domain/caller.js'
import { secretId } from '../../../src/domain/credentials.js'
import { ApiError } from '../../../src/domain/errors.js'
import { deleteObject } from '../../../src/domain/operations/deleteObject.js'
import { issueTokens, userOfAccessToken } from '../../../src/domain/operations/tokens.js'
import { updateObject } from '../../../src/domain/operations/updateObject.js'
import { User } from '../../../src/domain/resources/user.js'
import { addUser, domainTenant, NOW } from '../../helpers/domainState.js'

const LIFETIMES = { accessMs: 60_000, refreshMs: 600_000 }

function refusal(work: () => unknown): string | null {
  try {
    work()
    return null
  } catch (error) {
    return error instanceof ApiError ? `${error.code} ${error.message}` : String(error)
  }
}

t.test('an access token signs its user in until it expires, while the user is active and outside the trash', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const issued = write((tx) => issueTokens(tx, bob.userId, LIFETIMES))
  const tokenId = secretId(issued.token)
  t.equal(userOfAccessToken(state, tokenId, NOW).id, bob.userId)
  t.equal(userOfAccessToken(state, tokenId, NOW + LIFETIMES.accessMs - 1).id, bob.userId, 'until the last millisecond')
  t.equal(
    refusal(() => userOfAccessToken(state, tokenId, NOW + LIFETIMES.accessMs)),
    'TL01-1010 the access token has expired',
  )
  t.equal(
    refusal(() => userOfAccessToken(state, secretId(issued.refreshToken), NOW)),
    'TL01-1010 the access token is invalid',
    'a refresh token is no access token',
  )
  t.equal(
    refusal(() => userOfAccessToken(state, secretId('never-issued'), NOW)),
    'TL01-1010 the access token is invalid',
  )
  write((tx) => updateObject(tx, owner, User, bob.userId, { active: false }, 'any'))
  // Deactivating ends the user's sessions (sessions.ts): a token issued after it still does not sign in.
  const later = write((tx) => issueTokens(tx, bob.userId, LIFETIMES))
  t.equal(
    refusal(() => userOfAccessToken(state, secretId(later.token), NOW)),
    'TL01-1010 the user of this token cannot sign in',
    'an inactive user',
  )
  write((tx) => updateObject(tx, owner, User, bob.userId, { active: true }, 'any'))
  const again = write((tx) => issueTokens(tx, bob.userId, LIFETIMES))
  t.equal(userOfAccessToken(state, secretId(again.token), NOW).id, bob.userId)
  write((tx) => deleteObject(tx, owner, User, bob.userId, false))
  const trashed = write((tx) => issueTokens(tx, bob.userId, LIFETIMES))
  t.equal(
    refusal(() => userOfAccessToken(state, secretId(trashed.token), NOW)),
    'TL01-1010 the user of this token cannot sign in',
    'a user in the trash',
  )
})

t.test('a signed-in user is a superuser when the account owner or an admin', async (t) => {
  const tenant = domainTenant()
  const { state, owner } = tenant
  const ann = addUser(tenant, 'ann@acme.test', { admin: true })
  const bob = addUser(tenant, 'bob@acme.test')
  const callerOf = (userId: string) => {
    const user = state.get(User.type, userId)
    if (user === undefined) throw new Error(`no user ${userId} in the tenant`)
    return callerOfUser(state, user, 'token-hash')
  }
  t.same(callerOf(owner.userId), { userId: owner.userId, superuser: true, isOwner: true, tokenId: 'token-hash' })
  t.same(callerOf(ann.userId), { userId: ann.userId, superuser: true, isOwner: false, tokenId: 'token-hash' })
  t.same(callerOf(bob.userId), { userId: bob.userId, superuser: false, isOwner: false, tokenId: 'token-hash' })
})
