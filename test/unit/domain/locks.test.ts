/*
 * Locked periods (domain/operations/locks.ts), called directly: the lock
 * date of a user is the latest of the account's lock and their own (another
 * user's lock and a lock in the trash count for nothing); a create, change
 * or delete of a time record or expense dated before it is refused with
 * 412 TL01-1106 (a change by the date it had and the date it gets) unless
 * the caller is a superuser; other resources are never locked.
 */
import t from 'tap'
import { createObject } from '../../../src/domain/operations/createObject.js'
import { deleteObject } from '../../../src/domain/operations/deleteObject.js'
import { checkNotLocked, lockDateOf } from '../../../src/domain/operations/locks.js'
import { updateObject } from '../../../src/domain/operations/updateObject.js'
import { Client } from '../../../src/domain/resources/client.js'
import { Lock } from '../../../src/domain/resources/lock.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { addUser, codeOf, domainTenant, NOW } from '../../helpers/domainState.js'

const DAY_MS = 86_400_000

t.test('the lock date of a user: the latest of the account’s and their own', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const carol = addUser(tenant, 'carol@acme.test')
  t.equal(lockDateOf(state, bob.userId), null, 'no locks')
  write((tx) => createObject(tx, owner, Lock, { lockDate: NOW - 10 * DAY_MS, user: null }))
  t.equal(lockDateOf(state, bob.userId), NOW - 10 * DAY_MS, 'the account’s lock')
  write((tx) => createObject(tx, owner, Lock, { lockDate: NOW - 5 * DAY_MS, user: bob.userId }))
  t.equal(lockDateOf(state, bob.userId), NOW - 5 * DAY_MS, 'bob’s own, later')
  t.equal(lockDateOf(state, carol.userId), NOW - 10 * DAY_MS, 'bob’s lock is not carol’s')
  const latest = write((tx) => createObject(tx, owner, Lock, { lockDate: NOW - DAY_MS, user: null }))
  t.equal(lockDateOf(state, bob.userId), NOW - DAY_MS, 'the latest wins, whoever’s')
  write((tx) => deleteObject(tx, owner, Lock, latest.id, false))
  t.equal(lockDateOf(state, bob.userId), NOW - 5 * DAY_MS, 'a lock in the trash counts for nothing')
})

t.test('a write before the lock date is refused for a user, allowed for a superuser', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const lockDate = NOW - 5 * DAY_MS
  const early = write((tx) => createObject(tx, bob, TimeRecord, { start: lockDate - DAY_MS, duration: 60_000 }))
  const late = write((tx) => createObject(tx, bob, TimeRecord, { start: lockDate, duration: 60_000 }))
  write((tx) => createObject(tx, owner, Lock, { lockDate, user: null }))
  const size = state.collection('TimeRecord').size
  t.equal(
    codeOf(() => write((tx) => createObject(tx, bob, TimeRecord, { start: lockDate - 1, duration: 60_000 }))),
    'TL01-1106',
    'create before it',
  )
  t.equal(state.collection('TimeRecord').size, size, 'nothing made')
  t.equal(write((tx) => createObject(tx, bob, TimeRecord, { start: lockDate, duration: 60_000 })).start, lockDate, 'at the lock date: open')
  t.equal(
    codeOf(() => write((tx) => updateObject(tx, bob, TimeRecord, early.id, { start: NOW }, 'any'))),
    'TL01-1106',
    'a change of a locked record, even out of the period',
  )
  t.equal(
    codeOf(() => write((tx) => updateObject(tx, bob, TimeRecord, late.id, { start: lockDate - 1 }, 'any'))),
    'TL01-1106',
    'a change into the period',
  )
  t.equal(
    codeOf(() => write((tx) => deleteObject(tx, bob, TimeRecord, early.id, false))),
    'TL01-1106',
    'a delete',
  )
  t.equal(state.get('TimeRecord', early.id)?.trashItem, null, 'still there')
  t.equal(write((tx) => updateObject(tx, owner, TimeRecord, early.id, { description: 'fixed' }, 'any')).description, 'fixed', 'a superuser changes it')
  t.equal(write((tx) => createObject(tx, owner, TimeRecord, { user: bob.userId, start: lockDate - DAY_MS, duration: 1 })).user, bob.userId, 'and creates in the period')
})

t.test('checkNotLocked: each side of a change, resources without a lock date', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const lockDate = NOW - 5 * DAY_MS
  write((tx) => createObject(tx, owner, Lock, { lockDate, user: bob.userId }))
  const locked = { user: bob.userId, start: lockDate - 1 }
  const open = { user: bob.userId, start: lockDate }
  const rec = (values: Record<string, unknown>) => ({ id: 'r', version: 1, createdAt: NOW, updatedAt: NOW, trashItem: null, ...values })
  t.equal(
    codeOf(() => checkNotLocked(state, bob, TimeRecord, undefined, locked)),
    'TL01-1106',
    'create',
  )
  t.equal(
    codeOf(() => checkNotLocked(state, bob, TimeRecord, rec(locked), undefined)),
    'TL01-1106',
    'delete',
  )
  t.equal(
    codeOf(() => checkNotLocked(state, bob, TimeRecord, rec(open), open)),
    null,
    'a change in the open period',
  )
  t.equal(
    codeOf(() => checkNotLocked(state, bob, TimeRecord, undefined, { user: owner.userId, start: lockDate - 1 })),
    null,
    'another user’s record: bob’s lock is not theirs',
  )
  t.equal(
    codeOf(() => checkNotLocked(state, bob, TimeRecord, undefined, { user: bob.userId, start: null })),
    null,
    'no date: nothing to compare',
  )
  t.equal(
    codeOf(() => checkNotLocked(state, owner, TimeRecord, rec(locked), locked)),
    null,
    'a superuser',
  )
  t.equal(
    codeOf(() => checkNotLocked(state, bob, Client, undefined, { user: bob.userId, start: lockDate - 1 })),
    null,
    'a resource without a lock date',
  )
})
