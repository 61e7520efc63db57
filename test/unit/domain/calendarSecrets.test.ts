/*
 * The caller's calendar secret (domain/operations/calendarSecrets.ts),
 * called directly: made under the hash of its text, for the caller; a new
 * one replaces the caller's earlier one and no one else's; removing it
 * answers the removed record, and 404 when the caller has none.
 */
import t from 'tap'
import { calendarSecretOf, calendarSecretUser } from '../../../src/domain/calendarSecrets.js'
import { secretId } from '../../../src/domain/credentials.js'
import { makeCalendarSecret, removeCalendarSecret } from '../../../src/domain/operations/calendarSecrets.js'
import { addUser, codeOf, domainTenant } from '../../helpers/domainState.js'

t.test('made under its hash; a new one replaces the caller’s own only', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const first = write((tx) => makeCalendarSecret(tx, owner, 'the-first-calendar-text'))
  t.same([first.id, first.user], [secretId('the-first-calendar-text'), owner.userId])
  t.equal(calendarSecretUser(state, 'the-first-calendar-text')?.id, owner.userId, 'the text finds its user')
  const bobs = write((tx) => makeCalendarSecret(tx, bob, 'bobs-calendar-text'))
  const second = write((tx) => makeCalendarSecret(tx, owner, 'the-second-calendar-text'))
  t.equal(state.get('CalendarSecret', first.id), undefined, 'the earlier one is gone')
  t.equal(calendarSecretUser(state, 'the-first-calendar-text'), null, 'its URL no longer works')
  t.equal(calendarSecretOf(state, owner.userId)?.id, second.id)
  t.equal(state.get('CalendarSecret', bobs.id)?.user, bob.userId, 'another user’s stays')
  t.equal(state.collection('CalendarSecret').size, 2)
})

t.test('removed: the record answered, the URL dead; 404 without one', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  t.equal(
    codeOf(() => write((tx) => removeCalendarSecret(tx, owner))),
    'TL01-1101',
  )
  const made = write((tx) => makeCalendarSecret(tx, owner, 'the-calendar-text'))
  write((tx) => makeCalendarSecret(tx, bob, 'bobs-calendar-text'))
  t.equal(write((tx) => removeCalendarSecret(tx, owner)).id, made.id)
  t.equal(calendarSecretUser(state, 'the-calendar-text'), null)
  t.equal(calendarSecretOf(state, bob.userId)?.user, bob.userId, 'bob’s stays')
  t.equal(
    codeOf(() => write((tx) => removeCalendarSecret(tx, owner))),
    'TL01-1101',
    'a second removal',
  )
})
