/*
 * The read barrier with answers that need not wait (maybePromise.ts): a
 * read of an idle tenant whose every entry is durable is answered at once,
 * as a value; a read while a write is being flushed is a promise that
 * settles only after that write is durable, and shows it; a read while an
 * exclusive job holds the tenant waits for the job.
 */
import t from 'tap'
import { insertRecord } from '../../src/domain/recordMaking.js'
import { TimeRecord } from '../../src/domain/resources/timeRecord.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'

t.test('a read answers at once only when it waits for nothing', async (t) => {
  const server = await startInProcess(tempDataDir('read-barrier'))
  t.teardown(() => server.stop())
  await server.client.createTenant('barrier')
  const actor = server.service.services.registry.get('barrier')
  if (actor === undefined) throw new Error('no tenant')
  const userId = [...actor.state.collection('User').values()][0]?.id as string
  const count = () => actor.read((state) => state.collection('TimeRecord').size)

  const idle = count()
  t.notOk(idle instanceof Promise, 'idle and durable: the answer itself')
  t.equal(idle, 0)

  const { store } = server.service.services.registry
  const written = actor.write((tx) => insertRecord(tx, TimeRecord, { user: userId, start: Date.UTC(2026, 0, 5), duration: 60_000, description: 'one' }))
  const seq = actor.state.seq
  t.ok(store.lastSeq('barrier') < seq, 'the write is applied but not yet in the log')
  const during = count()
  t.ok(during instanceof Promise, 'a write is being flushed: a promise')
  const seen = await Promise.resolve(during).then((value) => {
    t.ok(store.lastSeq('barrier') >= seq, 'answered once the write is in the log')
    return value
  })
  t.equal(seen, 1, 'the read shows the write')
  await written
  t.notOk(actor.inspect((state) => state.seq) instanceof Promise, 'idle again: inspect answers at once')

  let release = () => {}
  const held = actor.exclusive(() => new Promise<void>((resolve) => (release = resolve)))
  const queued = count()
  t.ok(queued instanceof Promise, 'while an exclusive job runs: a promise')
  const queuedInspect = actor.inspect((state) => state.seq)
  t.ok(queuedInspect instanceof Promise, 'inspect waits for the job too')
  release()
  await held
  t.equal(await queued, 1)
})
