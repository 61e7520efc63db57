/*
 * The tenant actor's phases (src/tenants/tenantPhase.ts) and its mailbox
 * (src/tenants/mailbox.ts), on a real LMDB store without HTTP:
 *  - a tenant put to rest has no state: touching `state` is a bug (an
 *    assertion), never a hidden load from disk; it is loaded explicitly,
 *    by a request (a read wakes it, a slice per turn) or at once
 *    (loadAtOnce), and either tells the registry once (onWake);
 *  - past the mailbox limit a request is refused at once (MailboxFull), a
 *    job of the tenant layer itself never is.
 */
import t, { type Test } from 'tap'
import { loadConfig } from '../../../src/config.js'
import { EmbeddedStorage } from '../../../src/persist/embeddedStorage.js'
import { TenantActor } from '../../../src/tenants/tenantActor.js'
import { MailboxFull } from '../../../src/tenants/tenantErrors.js'
import { testEnv, tempDataDir } from '../../helpers/server.js'

async function storeAndActor(t: Test, env: Record<string, string> = {}): Promise<{ actor: TenantActor }> {
  const dataDir = tempDataDir('phases')
  const config = loadConfig(testEnv(dataDir, env))
  const store = EmbeddedStorage.open(dataDir, config.lmdbMapSizeBytes)
  t.teardown(() => store.close())
  const actor = TenantActor.fresh('acme', config, store)
  await actor.write((tx) =>
    tx.put('StorageEntry', {
      id: 'note',
      version: 1,
      group: 'g',
      itemKey: 'k',
      publicScope: true,
      owner: null,
      contentType: 'text/plain',
      content: 'kept',
      createdAt: 0,
      updatedAt: 0,
      trashItem: null,
    }),
  )
  await actor.snapshot()
  return { actor }
}

/** Puts the actor to rest as the registry does (an exclusive job); counts its wake-ups. */
async function putToRest(actor: TenantActor): Promise<{ woken: () => number }> {
  let wakes = 0
  await actor.exclusive(async () => actor.hibernate(() => (wakes += 1)))
  return { woken: () => wakes }
}

t.test('a resting tenant is loaded only explicitly: a read wakes it, loadAtOnce loads it at once', async (t) => {
  const { actor } = await storeAndActor(t)
  const rest = await putToRest(actor)
  t.ok(actor.resting, 'at rest')
  t.throws(() => actor.state, /assertion failed: .*loaded first/, 'touching its state is a bug, not a load from disk')
  t.ok(actor.resting, 'still at rest after the touch')
  t.equal(rest.woken(), 0)

  const read = actor.read((state) => state.get('StorageEntry', 'note')?.content)
  t.ok(read instanceof Promise, 'a read of a resting tenant waits for its load')
  t.equal(await read, 'kept', 'and sees what was there')
  t.notOk(actor.resting, 'the read woke it')
  t.equal(rest.woken(), 1, 'the registry hears of it once')

  const again = await putToRest(actor)
  t.equal(actor.loadAtOnce().get('StorageEntry', 'note')?.content, 'kept', 'loadAtOnce loads it synchronously')
  t.notOk(actor.resting)
  t.equal(again.woken(), 1)
  t.equal(
    actor.read((state) => state.seq),
    1,
    'served at once afterwards',
  )
})

t.test('past TENANT_MAILBOX_MAX_REQUESTS a request is refused; the tenant layer’s own jobs never are', async (t) => {
  const { actor } = await storeAndActor(t, { TENANT_MAILBOX_MAX_REQUESTS: '1' })
  let release!: () => void
  const held = actor.exclusive(() => new Promise<void>((resolve) => (release = resolve)))
  const first = actor.read((state) => state.seq)
  t.equal(actor.waiting, 1, 'one request waits')
  await t.rejects(Promise.resolve(actor.read((state) => state.seq)), MailboxFull, 'the next read is refused')
  await t.rejects(
    actor.write(() => undefined),
    MailboxFull,
    'so is a write',
  )
  await t.rejects(
    actor.exclusive(async () => undefined, 'request'),
    MailboxFull,
    'and a request holding the tenant (a batch)',
  )
  const ownJob = actor.exclusive(async () => 'ran')
  t.equal(actor.waiting, 2, 'a job of the tenant layer waits beyond the limit')
  release()
  await held
  t.equal(await first, 1)
  t.equal(await ownJob, 'ran')
  t.equal(actor.waiting, 0)
})
