/*
 * The If-Match precondition of the domain, called directly: the object at
 * one of the expected versions passes, any other version is 412 TL01-1110,
 * `any` asks only that it exist; an object that is not there (or in the
 * trash, unless the change reaches the trash too) is 404 first; and a
 * refusal inside a write leaves the state as it was.
 */
import t from 'tap'
import { createObject } from '../../../src/domain/operations/createObject.js'
import { deleteObject } from '../../../src/domain/operations/deleteObject.js'
import { checkExpectedVersion } from '../../../src/domain/operations/expectedVersion.js'
import { updateObject } from '../../../src/domain/operations/updateObject.js'
import { Client } from '../../../src/domain/resources/client.js'
import { codeOf, domainTenant } from '../../helpers/domainState.js'

t.test('the expected versions', async (t) => {
  const { state, owner, write } = domainTenant()
  const client = write((tx) => createObject(tx, owner, Client, { name: 'Globex' }))
  write((tx) => updateObject(tx, owner, Client, client.id, { name: 'Initech' }, 1))
  t.equal(
    codeOf(() => checkExpectedVersion(state, owner, Client, client.id, [2])),
    null,
    'at version 2',
  )
  t.equal(
    codeOf(() => checkExpectedVersion(state, owner, Client, client.id, [1, 2])),
    null,
    'one of several',
  )
  t.equal(
    codeOf(() => checkExpectedVersion(state, owner, Client, client.id, 'any')),
    null,
    'any version',
  )
  t.equal(
    codeOf(() => checkExpectedVersion(state, owner, Client, client.id, [1])),
    'TL01-1110',
    'a stale version',
  )
  t.equal(
    codeOf(() => checkExpectedVersion(state, owner, Client, client.id, [])),
    'TL01-1110',
    'no version named at all',
  )
  t.equal(
    codeOf(() => checkExpectedVersion(state, owner, Client, 'nope', 'any')),
    'TL01-1101',
    'not there: 404, also for any',
  )
})

t.test('in the trash: 404 unless the change reaches the trash', async (t) => {
  const { state, owner, write } = domainTenant()
  const client = write((tx) => createObject(tx, owner, Client, { name: 'Globex' }))
  write((tx) => deleteObject(tx, owner, Client, client.id, false))
  const trashed = state.get('Client', client.id)
  t.ok(trashed !== undefined && trashed.trashItem !== null, 'trashed')
  t.equal(
    codeOf(() => checkExpectedVersion(state, owner, Client, client.id, 'any')),
    'TL01-1101',
    'a change of a live object',
  )
  t.equal(
    codeOf(() => checkExpectedVersion(state, owner, Client, client.id, [trashed?.version ?? 0], true)),
    null,
    'a delete for good',
  )
})

t.test('a refusal rolls the write back whole', async (t) => {
  const { state, owner, write } = domainTenant()
  const client = write((tx) => createObject(tx, owner, Client, { name: 'Globex' }))
  const refused = codeOf(() =>
    write((tx) => {
      checkExpectedVersion(tx.state, owner, Client, client.id, [1])
      const changed = updateObject(tx, owner, Client, client.id, { name: 'Changed' }, 'any')
      checkExpectedVersion(tx.state, owner, Client, client.id, [1])
      return changed
    }),
  )
  t.equal(refused, 'TL01-1110', 'the second check sees the change of the same write')
  t.equal(state.get('Client', client.id)?.name, 'Globex', 'and nothing of it stays')
})
