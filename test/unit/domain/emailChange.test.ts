/*
 * `$setEmail` (domain/operations/emailChange.ts), called directly: the
 * address is stored trimmed and in lower case as a change of the user (a
 * new version), held to the Email constraint and to uniqueness among the
 * live users; the user themself (proving their current password), the
 * owner and admins may change it, no other user, and only the owner the
 * owner's.
 */
import t from 'tap'
import { setUserEmail } from '../../../src/domain/operations/emailChange.js'
import { normalEmail } from '../../../src/domain/values.js'
import { liveUserWithEmail, User } from '../../../src/domain/resources/user.js'
import type { Rec } from '../../../src/domain/schema.js'
import { addUser, codeOf, domainTenant, NOW, type DomainTenant, type TestCaller } from '../../helpers/domainState.js'

/** The caller's session with their current password proven (as http/routes/passwordProof.ts hands it in). */
function proven(tenant: DomainTenant, caller: TestCaller) {
  const user = tenant.state.get('User', caller.userId) as Rec
  return { ...caller, knownPassword: { userId: caller.userId, hash: user.password as string, version: user.version } }
}

t.test('the form every e-mail is kept in', async (t) => {
  t.equal(normalEmail('  Bob.Smith@ACME.test \n'), 'bob.smith@acme.test')
  t.equal(normalEmail('already@normal.test'), 'already@normal.test')
})

t.test('the change: normalised, a new version, the login from now on', async (t) => {
  const tenant = domainTenant()
  const { state, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const before = state.get('User', bob.userId)
  t.equal(
    codeOf(() => write((tx) => setUserEmail(tx, bob, User, bob.userId, 'robert@acme.test'))),
    'TL01-1008',
    'one’s own, without the current password',
  )
  const after = write((tx) => setUserEmail(tx, proven(tenant, bob), User, bob.userId, '  Robert@Acme.TEST '), NOW + 3)
  t.same([after.email, after.version, after.updatedAt], ['robert@acme.test', (before?.version as number) + 1, NOW + 3])
  t.equal(liveUserWithEmail(state, 'robert@acme.test')?.id, bob.userId, 'found by the new address')
  t.equal(liveUserWithEmail(state, 'bob@acme.test'), undefined, 'not by the old one')
})

t.test('refusals: a bad address, one another live user has, a caller who may not', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const carol = addUser(tenant, 'carol@acme.test')
  const admin = addUser(tenant, 'ada@acme.test', { admin: true })
  t.equal(
    codeOf(() => write((tx) => setUserEmail(tx, admin, User, bob.userId, 'not an address'))),
    'TL01-1104',
  )
  t.equal(
    codeOf(() => write((tx) => setUserEmail(tx, admin, User, bob.userId, ' CAROL@acme.test'))),
    'TL01-1104',
    'taken, compared in its normal form',
  )
  t.equal(
    codeOf(() => write((tx) => setUserEmail(tx, carol, User, bob.userId, 'x@acme.test'))),
    'TL01-1008',
    'another plain user',
  )
  t.equal(
    codeOf(() => write((tx) => setUserEmail(tx, admin, User, owner.userId, 'x@acme.test'))),
    'TL01-1008',
    'an admin, the owner’s',
  )
  t.equal(state.get('User', bob.userId)?.email, 'bob@acme.test', 'nothing changed')
  t.equal(write((tx) => setUserEmail(tx, admin, User, bob.userId, 'bobby@acme.test')).email, 'bobby@acme.test', 'an admin, a user’s')
  t.equal(write((tx) => setUserEmail(tx, proven(tenant, owner), User, owner.userId, 'olga@new.test')).email, 'olga@new.test', 'the owner, their own')
})
