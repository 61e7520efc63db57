/*
 * The stopwatch (domain/operations/impulses.ts), called directly: stopping
 * a running impulse makes a time record of it (its user, project, task,
 * client, work type, description and billable; stop = now, never before
 * the start; the duration between) with the derived fields a POST would
 * get, and removes the impulse for good, in one write; an impulse not
 * running is refused with 412 TL01-1106 and nothing changes; another
 * user's impulse is not the caller's to stop. A watch report stamps
 * watchLast with the write's time.
 */
import t from 'tap'
import { createObject } from '../../../src/domain/operations/createObject.js'
import { notifyWatch, stopImpulse } from '../../../src/domain/operations/impulses.js'
import { Client } from '../../../src/domain/resources/client.js'
import { Impulse } from '../../../src/domain/resources/impulse.js'
import { Project } from '../../../src/domain/resources/project.js'
import { addUser, codeOf, domainTenant, NOW } from '../../helpers/domainState.js'

t.test('stopping a running impulse: a time record of it, the impulse gone', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const client = write((tx) => createObject(tx, owner, Client, { name: 'Globex' }))
  const project = write((tx) => createObject(tx, owner, Project, { name: 'Launch', client: client.id }))
  const impulse = write((tx) => createObject(tx, bob, Impulse, { start: NOW, stop: null, project: project.id, client: client.id, description: 'writing', billable: true }))
  const record = write((tx) => stopImpulse(tx, bob, Impulse, impulse.id, () => ({ description: 'derived' })), NOW + 90_000)
  t.same([record.user, record.project, record.client, record.billable, record.start, record.stop, record.duration], [bob.userId, project.id, client.id, true, NOW, NOW + 90_000, 90_000])
  t.equal(record.description, 'derived', 'the derived fields of the write are stored')
  t.equal(state.get('TimeRecord', record.id)?.duration, 90_000, 'stored')
  t.equal(state.get('Impulse', impulse.id), undefined, 'removed for good')
  t.equal(state.collection('TrashItem').size, 0, 'not to the trash')
})

t.test('a clock behind the start: stopped at the start, duration 0', async (t) => {
  const { owner, write } = domainTenant()
  const impulse = write((tx) => createObject(tx, owner, Impulse, { start: NOW + 60_000, stop: null }))
  const record = write((tx) => stopImpulse(tx, owner, Impulse, impulse.id), NOW)
  t.same([record.start, record.stop, record.duration], [NOW + 60_000, NOW + 60_000, 0])
})

t.test('refusals: not running, or not the caller’s; nothing changes', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const carol = addUser(tenant, 'carol@acme.test')
  const stopped = write((tx) => createObject(tx, bob, Impulse, { start: NOW - 60_000, stop: NOW }))
  const paused = write((tx) => createObject(tx, bob, Impulse, { mode: 'PAUSE', start: NOW - 60_000, stop: null }))
  const running = write((tx) => createObject(tx, bob, Impulse, { start: NOW - 60_000, stop: null }))
  t.equal(
    codeOf(() => write((tx) => stopImpulse(tx, bob, Impulse, stopped.id))),
    'TL01-1106',
    'already stopped',
  )
  t.equal(
    codeOf(() => write((tx) => stopImpulse(tx, bob, Impulse, paused.id))),
    'TL01-1106',
    'a pause',
  )
  t.equal(
    codeOf(() => write((tx) => stopImpulse(tx, carol, Impulse, running.id))),
    'TL01-1008',
    'another plain user’s',
  )
  t.equal(
    codeOf(() => write((tx) => stopImpulse(tx, bob, Impulse, 'no-such-id'))),
    'TL01-1101',
  )
  t.equal(state.collection('TimeRecord').size, 0, 'no time record made')
  t.equal(state.collection('Impulse').size, 3, 'every impulse still there')
  t.equal(write((tx) => stopImpulse(tx, owner, Impulse, running.id)).user, bob.userId, 'a superuser stops it, for its user')
})

t.test('a project manager stops an impulse on a project they own, for its user', async (t) => {
  const tenant = domainTenant()
  const { owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const manager = addUser(tenant, 'pat@acme.test', { projectManager: true })
  const theirs = write((tx) => createObject(tx, owner, Project, { name: 'Managed', owner: manager.userId }))
  const others = write((tx) => createObject(tx, owner, Project, { name: 'Not managed' }))
  const onTheirs = write((tx) => createObject(tx, bob, Impulse, { start: NOW, stop: null, project: theirs.id }))
  const onOthers = write((tx) => createObject(tx, bob, Impulse, { start: NOW, stop: null, project: others.id }))
  t.equal(
    codeOf(() => write((tx) => stopImpulse(tx, manager, Impulse, onOthers.id))),
    'TL01-1008',
    'not on a project of another owner',
  )
  t.equal(write((tx) => stopImpulse(tx, manager, Impulse, onTheirs.id), NOW + 1_000).user, bob.userId)
})

t.test('a watch report: watchLast is the write’s time', async (t) => {
  const { state, owner, write } = domainTenant()
  const impulse = write((tx) => createObject(tx, owner, Impulse, { start: NOW, stop: null }))
  const after = write((tx) => notifyWatch(tx, owner, Impulse, impulse.id), NOW + 5_000)
  t.same([after.watchLast, after.version, after.start], [NOW + 5_000, 2, NOW])
  t.equal(state.get('Impulse', impulse.id)?.watchLast, NOW + 5_000)
  t.equal(
    codeOf(() => write((tx) => notifyWatch(tx, owner, Impulse, 'no-such-id'))),
    'TL01-1101',
  )
})
