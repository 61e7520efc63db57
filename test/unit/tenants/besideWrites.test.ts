/*
 * Bytes stored beside a write's log entry (tenants/besideWrites.ts), on a
 * real LMDB store without HTTP: the actor's commit puts what the write
 * named (WriteTx.storeBeside) and removes what it named for removal, with
 * the entry; a write that throws after naming bytes stores none.
 */
import t from 'tap'
import { loadConfig } from '../../../src/config.js'
import type { WriteTx } from '../../../src/engine/writeTx.js'
import { EmbeddedStorage } from '../../../src/persist/embeddedStorage.js'
import { TenantActor } from '../../../src/tenants/tenantActor.js'
import { testEnv, tempDataDir } from '../../helpers/server.js'

function putEntry(tx: WriteTx, id: string): void {
  tx.put('StorageEntry', {
    id,
    version: 1,
    group: 'g',
    itemKey: id,
    publicScope: true,
    owner: null,
    contentType: 'text/plain',
    content: 'x',
    createdAt: 0,
    updatedAt: 0,
    trashItem: null,
  })
}

t.test('the commit stores and removes the bytes a write named, and a refused write stores none', async (t) => {
  const dataDir = tempDataDir('beside')
  const config = loadConfig(testEnv(dataDir))
  const store = EmbeddedStorage.open(dataDir, config.lmdbMapSizeBytes)
  t.teardown(() => store.close())
  const actor = TenantActor.fresh('acme', config, store)
  const bytes = Buffer.from('the bytes of an upload')

  await actor.write((tx) => {
    putEntry(tx, 'a')
    tx.storeBeside('file-a', bytes)
  })
  t.same(store.files.get(['acme', 'file-a']), bytes, 'stored with the write')

  await t.rejects(
    actor.write((tx) => {
      putEntry(tx, 'b')
      tx.storeBeside('file-b', bytes)
      throw new Error('refused after naming its bytes')
    }),
    /refused after naming/,
  )
  t.equal(store.files.get(['acme', 'file-b']), undefined, 'a refused write stores nothing')
  t.equal(actor.state.get('StorageEntry', 'b'), undefined, 'and keeps nothing in memory')

  await actor.write((tx) => {
    putEntry(tx, 'c')
    tx.removeBeside('file-a')
  })
  t.equal(store.files.get(['acme', 'file-a']), undefined, 'removed with the write')
})
