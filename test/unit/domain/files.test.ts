/*
 * Uploaded files (domain/files.ts), the operations called directly: an
 * upload stores the metadata and hands its bytes to the write
 * (WriteTx.beside), a replacement also names the bytes it replaces for
 * removal, a removal names its bytes; a refused upload (no right, no room)
 * leaves nothing to store, and a rollback to a savepoint forgets only what
 * was named after it.
 */
import t from 'tap'
import { findFileMetadata, removeFile, SIGNATURE, uploadFile } from '../../../src/domain/files.js'
import { WriteTx } from '../../../src/engine/writeTx.js'
import { addUser, codeOf, domainTenant, NOW } from '../../helpers/domainState.js'

const bytesOf = (text: string) => new TextEncoder().encode(text)
const values = (text: string) => ({ fileName: 'sig.png', contentType: 'image/png', bytes: bytesOf(text) })

t.test('an upload hands its bytes to the write; a replacement removes the bytes it replaces; a removal removes its own', async (t) => {
  const tenant = domainTenant()
  const { owner, write } = tenant
  const first = write((tx) => {
    const { rec, created } = uploadFile(tx, owner, SIGNATURE, '@self', values('first'), 'c1')
    t.ok(created, 'a new file')
    t.same(
      tx.beside.map(({ key, bytes }) => [key, bytes]),
      [[rec.fileKey, bytesOf('first')]],
      'its bytes, under its key',
    )
    t.equal(tx.storedBytes, 5)
    t.equal(rec.contentSize, 5, 'the size is the bytes’ length')
    return rec
  })
  const second = write((tx) => {
    const { rec, created } = uploadFile(tx, owner, SIGNATURE, '@self', values('second'), 'c2')
    t.notOk(created, 'a replacement')
    t.not(rec.fileKey, first.fileKey, 'under a key of its own')
    t.same(
      tx.beside.map(({ key, bytes }) => [key, bytes]),
      [
        [rec.fileKey, bytesOf('second')],
        [first.fileKey, null],
      ],
      'the new bytes stored, the replaced ones removed',
    )
    return rec
  })
  write((tx) => {
    removeFile(tx, owner, SIGNATURE, '@self')
    t.same(
      tx.beside.map(({ key, bytes }) => [key, bytes]),
      [[second.fileKey, null]],
      'a removal removes the current bytes',
    )
    t.equal(tx.storedBytes, 0)
  })
  t.equal(findFileMetadata(tenant.state, SIGNATURE, owner.userId), undefined, 'and the metadata')
})

t.test('a refused upload leaves nothing to store', async (t) => {
  const tenant = domainTenant()
  const bob = addUser(tenant, 'bob@acme.test')
  const tx = new WriteTx(tenant.state, NOW)
  t.equal(
    codeOf(() => uploadFile(tx, bob, SIGNATURE, tenant.owner.userId, values('forged'), 'c1')),
    'TL01-1008',
    'another user’s signature',
  )
  t.same(tx.beside, [], 'no bytes named')

  const full = new WriteTx(tenant.state, NOW, () => {
    throw new Error('no room')
  })
  t.throws(() => uploadFile(full, tenant.owner, SIGNATURE, '@self', values('too big'), 'c2'), /no room/, 'a store without room refuses it')
  t.same([full.beside, full.ops], [[], []], 'before anything is named or put')
})

t.test('a rollback forgets the bytes named after its savepoint, and only those', async (t) => {
  const tenant = domainTenant()
  const bob = addUser(tenant, 'bob@acme.test')
  const tx = new WriteTx(tenant.state, NOW)
  uploadFile(tx, tenant.owner, SIGNATURE, '@self', values('kept'), 'c1')
  const savepoint = tx.savepoint()
  uploadFile(tx, bob, SIGNATURE, '@self', values('dropped'), 'c2')
  t.equal(tx.beside.length, 2)
  tx.rollbackTo(savepoint)
  t.same(
    tx.beside.map(({ bytes }) => bytes),
    [bytesOf('kept')],
    'the bytes named before the savepoint stay',
  )
  t.equal(tx.storedBytes, 4)
  tx.rollback()
  t.same([tx.beside, tx.storedBytes], [[], 0], 'a whole rollback forgets every one')
})
