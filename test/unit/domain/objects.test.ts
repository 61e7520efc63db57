/*
 * The object operations of the domain, called directly on a WriteTx: a
 * create fills the caller in as the user and stamps the write's time; an
 * update follows the version rule; $set takes only fields a client may
 * write; a delete goes to the trash (and comes back from it) or, hard, for
 * good.
 */
import t from 'tap'
import { createObject } from '../../../src/domain/operations/createObject.js'
import { deleteObject } from '../../../src/domain/operations/deleteObject.js'
import { findVisible } from '../../../src/domain/operations/findVisible.js'
import { fieldsFromText, setFields } from '../../../src/domain/operations/setFields.js'
import { restoreTrashItem } from '../../../src/domain/operations/trashItems.js'
import { updateObject } from '../../../src/domain/operations/updateObject.js'
import { Client } from '../../../src/domain/resources/client.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { TrashItem } from '../../../src/domain/resources/trashItem.js'
import { User } from '../../../src/domain/resources/user.js'
import { codeOf, domainTenant, NOW } from '../../helpers/domainState.js'

t.test('create: the caller is the user when the values leave it out; version 1 at the write time; defaults applied', async (t) => {
  const { state, owner, write } = domainTenant()
  const rec = write((tx) => createObject(tx, owner, TimeRecord, { start: NOW, stop: NOW + 3_600_000 }), NOW + 5)
  t.equal(rec.user, owner.userId)
  t.equal(rec.version, 1)
  t.equal(rec.createdAt, NOW + 5)
  t.equal(rec.updatedAt, NOW + 5)
  t.equal(rec.trashItem, null)
  t.same(state.get('TimeRecord', rec.id), rec, 'stored as returned')
  t.same(findVisible(state, owner, TimeRecord, rec.id), rec)
  const derived = write((tx) => createObject(tx, owner, Client, { name: 'Globex' }, (rec) => ({ name: `${String(rec.name)} (derived)` })))
  t.equal(derived.name, 'Globex (derived)', 'derived fields, computed from the record about to be stored, are stored')
})

t.test('update: the version rule', async (t) => {
  const { owner, write } = domainTenant()
  const client = write((tx) => createObject(tx, owner, Client, { name: 'Globex' }))
  t.equal(
    codeOf(() => write((tx) => updateObject(tx, owner, Client, client.id, { name: 'x' }, 'required'))),
    'TL01-1107',
    'a version is required',
  )
  t.equal(
    codeOf(() => write((tx) => updateObject(tx, owner, Client, client.id, { name: 'x' }, 7))),
    'TL01-1107',
    'a stale version is refused',
  )
  const after = write((tx) => updateObject(tx, owner, Client, client.id, { name: 'Initech' }, 1), NOW + 10)
  t.same([after.name, after.version, after.updatedAt, after.createdAt], ['Initech', 2, NOW + 10, NOW])
  const unversioned = write((tx) => updateObject(tx, owner, Client, client.id, { name: 'Hooli' }, 'any'))
  t.equal(unversioned.version, 3, 'without the requirement, no version is needed')
  t.equal(
    codeOf(() => write((tx) => updateObject(tx, owner, Client, 'no-such-id', {}, 'any'))),
    'TL01-1101',
    'an unknown object is not found',
  )
})

t.test('$set: only writable fields, converted from text; the version only when named', async (t) => {
  const { owner, write } = domainTenant()
  const client = write((tx) => createObject(tx, owner, Client, { name: 'Globex' }))
  t.same(fieldsFromText(Client, [['name', 'Initech']]), { name: 'Initech' })
  t.equal(
    codeOf(() => fieldsFromText(Client, [['id', 'x']])),
    'TL01-1105',
    'the id is read-only',
  )
  t.equal(
    codeOf(() => fieldsFromText(Client, [['nonsense', 'x']])),
    'TL01-1105',
    'an unknown field',
  )
  t.equal(
    codeOf(() => fieldsFromText(User, [['password', 'a-new-password']])),
    'TL01-1105',
    'a password is never set from text',
  )
  t.equal(
    codeOf(() => write((tx) => setFields(tx, owner, Client, client.id, { name: 'x' }, 5))),
    'TL01-1107',
  )
  const after = write((tx) => setFields(tx, owner, Client, client.id, fieldsFromText(Client, [['name', 'Initech']]), null))
  t.same([after.name, after.version], ['Initech', 2])
})

t.test('delete: to the trash and back; hard: for good', async (t) => {
  const { state, owner, write } = domainTenant()
  const client = write((tx) => createObject(tx, owner, Client, { name: 'Globex' }))
  const { trashItemId } = write((tx) => deleteObject(tx, owner, Client, client.id, false))
  t.type(trashItemId, 'string')
  t.equal(state.get('Client', client.id)?.trashItem, trashItemId, 'the object is in the trash')
  t.equal(
    codeOf(() => findVisible(state, owner, Client, client.id)),
    'TL01-1101',
    'and not found among the live ones',
  )
  t.equal(findVisible(state, owner, Client, client.id, true).id, client.id)
  const restored = write((tx) => restoreTrashItem(tx, owner, TrashItem, trashItemId as string))
  t.same([restored.decl.type, restored.rec.id, restored.rec.trashItem], ['Client', client.id, null])
  t.equal(state.get('TrashItem', trashItemId as string), undefined, 'the trash item is gone')
  t.same(
    write((tx) => deleteObject(tx, owner, Client, client.id, true)),
    { trashItemId: null },
  )
  t.equal(state.get('Client', client.id), undefined, 'removed for good')
})

t.test('a failed operation leaves the state as it was', async (t) => {
  const { state, owner, write } = domainTenant()
  const before = state.collection('Client').size
  t.equal(
    codeOf(() =>
      write((tx) => {
        createObject(tx, owner, Client, { name: 'Globex' })
        return updateObject(tx, owner, Client, 'no-such-id', {}, 'any')
      }),
    ),
    'TL01-1101',
  )
  t.equal(state.collection('Client').size, before)
})
