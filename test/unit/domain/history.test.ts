/*
 * The history items of changes (src/domain/history.ts) and what an update
 * changed (src/domain/fieldChanges.ts), called directly: who made a change
 * (a user's stub, null for no signed-in user, unknown before log format
 * 4), an update's fields old and new as a GET shows them, read off the
 * values logged before it or the version before it, never a field a GET
 * hides; who may read an object's history; the record $filter tests.
 */
import t from 'tap'
import { changeVisibleTo, type Change } from '../../../src/domain/changes.js'
import { changedFields, sameValue } from '../../../src/domain/fieldChanges.js'
import { activityRecordOf, fieldChangesOf, historyItemOf, historyVisibleTo } from '../../../src/domain/history.js'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import type { DisplayContext, Rec } from '../../../src/domain/schema.js'
import { changesOfEntry } from '../../../src/engine/changesOfEntry.js'
import { decodeLogEntry, encodeLogEntry, encodePlain } from '../../../src/persist/codec.js'
import { LOG_ENTRY_FORMAT, type LogEntry, type LoggedEntry } from '../../../src/engine/logEntry.js'

const Client = resourceByType('Client')
const User = resourceByType('User')
const Project = resourceByType('Project')
const AT = 1_700_000_000_000
const olive = buildRecord(User, { firstName: 'Olive', lastName: 'Owner', email: 'olive@acme.test' }, AT)
const created = buildRecord(Client, { name: 'Initech' }, AT)
const updated = { ...created, name: 'Initech AG', code: 'IAG', version: 2, updatedAt: AT + 10 }

const records = new Map<string, Rec>([[`User:${olive.id}`, olive]])
const context: DisplayContext = {
  get: (type, id) => records.get(`${type}:${id}`),
  displayNameOf: (type, id) => {
    const rec = records.get(`${type}:${id}`)
    return rec === undefined ? '' : resourceByType(type).displayName(rec, context)
  },
}

/** The first change of a log entry; an entry that makes none is a broken test. */
function firstChange(seq: number, entry: LogEntry | LoggedEntry): Change {
  const [change] = changesOfEntry(seq, entry)
  if (change === undefined) throw new Error(`the log entry ${seq} made no change`)
  return change
}

t.test('changedFields: the fields whose values differ, their values before; not version nor updatedAt', async (t) => {
  t.same(changedFields(created, updated), { names: ['name', 'code'], values: ['Initech', null] })
  t.equal(changedFields(created, { ...created, version: 2, updatedAt: AT + 1 }), null, 'only the bookkeeping changed')
  t.ok(sameValue(['a', 'b'], ['a', 'b']))
  t.notOk(sameValue(['a', 'b'], ['b', 'a']))
  t.ok(sameValue(null, undefined), 'unset is null')
  t.ok(sameValue({ a: [1] }, { a: [1] }))
  t.notOk(sameValue({ a: 1 }, { b: 1 }))
  t.ok(sameValue(Buffer.from('x'), Buffer.from('x')))
})

t.test('an update logged in format 4: who made it, and each changed field old and new', async (t) => {
  const entry = decodeLogEntry(
    encodeLogEntry({ v: LOG_ENTRY_FORMAT, at: AT + 10, ops: [{ op: 'put', type: 'Client', rec: updated, was: changedFields(created, updated) ?? undefined }], by: olive.id }),
  )
  const change = firstChange(5, entry)
  const item = historyItemOf(change, context)
  t.match(item, { seq: 5, op: 0, at: `/Date(${AT + 10})/`, userKnown: true, kind: 'updated', resource: 'time/clients', type: 'Client', id: created.id, version: 2 })
  t.same(item.user, { id: olive.id, version: 1, displayName: 'Owner Olive', firstName: 'Olive', lastName: 'Owner' }, 'the user’s stub')
  t.same(item.changes, [
    { field: 'name', old: 'Initech', new: 'Initech AG' },
    { field: 'code', old: null, new: 'IAG' },
  ])
  const gone = historyItemOf({ ...change, by: 'someone-removed' }, context)
  t.same(gone.user, { id: 'someone-removed' }, 'a user the tenant no longer holds: the id alone')
  t.same(historyItemOf({ ...change, by: null }, context).user, null, 'no signed-in user')
  t.equal(historyItemOf({ ...change, by: null }, context).userKnown, true)
})

t.test('an entry written before format 4: its user is unknown, its fields known only from the version before', async (t) => {
  const names = Object.keys(updated)
  const entry = decodeLogEntry(encodePlain([3, AT + 10, [['put', 'Client', names.join(','), names.map((name) => (updated as Record<string, unknown>)[name])]]]))
  const change = firstChange(5, entry)
  const without = historyItemOf(change, context)
  t.equal(without.user, null)
  t.equal(without.userKnown, false, 'unknown')
  t.equal(without.changes, null, 'the values before are not logged')
  t.same(
    historyItemOf(change, context, created).changes,
    [
      { field: 'name', old: 'Initech', new: 'Initech AG' },
      { field: 'code', old: null, new: 'IAG' },
    ],
    'read off the version before',
  )
})

t.test('fields a GET never shows never appear: a password hash', async (t) => {
  const changedUser = { ...olive, password: '$argon2id$new', lastName: 'Other', version: 2, updatedAt: AT + 5 }
  const withHash = { ...olive, password: '$argon2id$old' }
  const was = changedFields(withHash, changedUser)
  if (was === null) throw new Error('changedFields found no changed field between the user and its changed copy')
  t.same(was.names, ['lastName', 'password'], 'the log keeps what changed')
  t.same(fieldChangesOf(User, changedUser, was), [{ field: 'lastName', old: 'Owner', new: 'Other' }], 'the history never shows the hash')
})

t.test('dates as a GET shows them; a created change has no fields', async (t) => {
  const TimeRecord = resourceByType('TimeRecord')
  const record = buildRecord(TimeRecord, { start: AT, stop: AT + 60_000 }, AT)
  const moved = { ...record, stop: AT + 120_000 }
  t.match(fieldChangesOf(TimeRecord, moved, { names: ['stop'], values: [AT + 60_000] }), [{ field: 'stop', old: `/Date(${AT + 60_000})/`, new: `/Date(${AT + 120_000})/` }])
  const change = firstChange(1, { v: LOG_ENTRY_FORMAT, at: AT, ops: [{ op: 'put', type: 'Client', rec: created }], by: olive.id })
  t.equal(historyItemOf(change, context).changes, null)
})

t.test('who may read an object’s history: as a GET shows it, or as its newest change went', async (t) => {
  const personal = buildRecord(Project, { name: 'Mine', owner: olive.id, personal: true }, AT)
  const oliveCaller = { userId: olive.id, superuser: false }
  const other = { userId: 'other', superuser: true }
  t.ok(historyVisibleTo(oliveCaller, Project, personal, null, context))
  t.notOk(historyVisibleTo(other, Project, personal, null, context), 'someone else’s personal project: not even an admin')
  t.notOk(historyVisibleTo(other, Client, undefined, null, context), 'never seen: nobody')
  const removal = firstChange(2, { v: LOG_ENTRY_FORMAT, at: AT, ops: [{ op: 'del', type: 'Client', id: created.id, seenBy: 'all' }], by: olive.id })
  t.equal(historyVisibleTo(other, Client, undefined, removal, context), changeVisibleTo(other, removal, context))
  t.ok(historyVisibleTo(other, Client, undefined, removal, context), 'removed: to those who saw it')
})

t.test('what $filter tests of a change', async (t) => {
  const change = firstChange(4, { v: LOG_ENTRY_FORMAT, at: AT, ops: [{ op: 'put', type: 'Client', rec: created }], by: olive.id })
  t.same(activityRecordOf(change), { seq: 4, at: AT, user: olive.id, resource: 'time/clients', type: 'Client', kind: 'created', objectId: created.id })
})
