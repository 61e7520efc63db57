/*
 * The kinds of change read off a log entry (src/engine/changesOfEntry.ts),
 * live (records) and as logged (field names and values): created, updated,
 * deleted, restored, removed; records that are never events give none, and
 * `op` counts every operation of the entry.
 */
import t from 'tap'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import { changesOfEntry, entryChangesAccess } from '../../../src/engine/changesOfEntry.js'
import type { LogEntry, LoggedEntry } from '../../../src/engine/logEntry.js'

const Client = resourceByType('Client')
const AT = 1_700_000_000_000
const created = buildRecord(Client, { name: 'Initech' }, AT)
const updated = { ...created, name: 'Initech AG', version: 2, updatedAt: AT + 10 }
const trashed = { ...updated, trashItem: 'trash-1' }
const restored = { ...updated, trashItem: null }

const entry = (at: number, ops: LogEntry['ops']): LogEntry => ({ v: 2, at, ops })
const kindsOf = (at: number, ops: LogEntry['ops']) => changesOfEntry(7, entry(at, ops)).map((change) => change.kind)

t.same(kindsOf(AT, [{ op: 'put', type: 'Client', rec: created }]), ['created'])
t.same(kindsOf(AT + 10, [{ op: 'put', type: 'Client', rec: updated }]), ['updated'])
t.same(
  kindsOf(AT + 20, [
    { op: 'put', type: 'TrashItem', rec: buildRecord(resourceByType('TrashItem'), {}, AT + 20) },
    { op: 'put', type: 'Client', rec: trashed },
  ]),
  ['created', 'deleted'],
)
t.same(
  kindsOf(AT + 30, [
    { op: 'del', type: 'TrashItem', id: 'trash-1' },
    { op: 'put', type: 'Client', rec: restored },
  ]),
  ['removed', 'restored'],
)
t.same(kindsOf(AT + 40, [{ op: 'del', type: 'Client', id: created.id }]), ['removed'])
t.same(kindsOf(AT + 40, [{ op: 'put', type: 'Client', rec: { ...updated } }]), ['updated'], 'a put without a trash item removed is no restore')

t.test('records that are never events give none; op counts every operation', async (t) => {
  const token = buildRecord(resourceByType('AuthToken'), { kind: 'access' }, AT)
  const changes = changesOfEntry(
    9,
    entry(AT, [
      { op: 'put', type: 'AuthToken', rec: token },
      { op: 'put', type: 'Client', rec: created },
    ]),
  )
  t.equal(changes.length, 1)
  t.match(changes[0], { seq: 9, op: 1, atMs: AT, id: created.id, kind: 'created' })
  t.ok(entryChangesAccess(entry(AT, [{ op: 'put', type: 'AuthToken', rec: token }])), 'a token changed: access may have')
  t.notOk(entryChangesAccess(entry(AT, [{ op: 'put', type: 'Client', rec: created }])))
})

t.test('an entry as logged (field names and values) gives the same changes', async (t) => {
  const names = Object.keys(updated)
  const logged: LoggedEntry = { v: 2, at: AT + 10, ops: [{ op: 'putFields', type: 'Client', names, values: names.map((name) => (updated as Record<string, unknown>)[name]) }] }
  const [change] = changesOfEntry(3, logged)
  t.equal(change?.kind, 'updated')
  t.equal(change?.rec?.name, 'Initech AG')
})
