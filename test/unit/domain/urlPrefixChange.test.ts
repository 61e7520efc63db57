/*
 * `$setUrlPrefix` (domain/operations/urlPrefixChange.ts), called directly:
 * what may be asked is checked before anything moves (the account by its
 * id, 404 otherwise; the owner and admins only, 403; a prefix that is a
 * tenant name, 412 on `urlPrefix` otherwise), and the change is the
 * account at version + 1 with the new prefix.
 */
import t from 'tap'
import { accountOf } from '../../../src/domain/account.js'
import { ApiError } from '../../../src/domain/errors.js'
import { changeUrlPrefix, checkUrlPrefixChange, normalUrlPrefix } from '../../../src/domain/operations/urlPrefixChange.js'
import { TENANT_NAME_MAX_LENGTH } from '../../../src/domain/tenantName.js'
import { addUser, codeOf, domainTenant, NOW } from '../../helpers/domainState.js'

t.test('the form a prefix is compared in', async (t) => {
  t.equal(normalUrlPrefix('  New-Name \t'), 'new-name')
})

t.test('the check: the account, the caller, the name', async (t) => {
  const tenant = domainTenant()
  const { state, owner } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const admin = addUser(tenant, 'ada@acme.test', { admin: true })
  const account = accountOf(state)
  t.equal(checkUrlPrefixChange(state, owner, account.id, 'globex').id, account.id, 'the owner')
  t.equal(checkUrlPrefixChange(state, admin, account.id, 'globex').id, account.id, 'an admin')
  t.equal(
    codeOf(() => checkUrlPrefixChange(state, bob, account.id, 'globex')),
    'TL01-1008',
    'a plain user',
  )
  t.equal(
    codeOf(() => checkUrlPrefixChange(state, owner, 'another-account-id', 'globex')),
    'TL01-1101',
    'another account',
  )
  const longest = 'a'.repeat(TENANT_NAME_MAX_LENGTH)
  t.equal(
    codeOf(() => checkUrlPrefixChange(state, owner, account.id, longest)),
    null,
    'the longest name',
  )
  for (const bad of ['Globex', '-globex', 'globex-', 'glo.bex', '', `${longest}a`, 'api', 'www']) {
    try {
      checkUrlPrefixChange(state, owner, account.id, bad)
      t.fail(`'${bad}' is refused`)
    } catch (error) {
      t.match(error, { code: 'TL01-1104', constraintViolations: [{ entityType: 'Account', field: 'urlPrefix' }] }, `'${bad}'`)
      t.ok(error instanceof ApiError)
    }
  }
})

t.test('the change: the account at a new version with the new prefix', async (t) => {
  const { state, write } = domainTenant()
  const before = accountOf(state)
  const after = write((tx) => changeUrlPrefix(tx, 'globex'), NOW + 9)
  t.same([after.urlPrefix, after.version, after.updatedAt, after.name], ['globex', before.version + 1, NOW + 9, before.name])
  t.equal(accountOf(state).urlPrefix, 'globex')
})
