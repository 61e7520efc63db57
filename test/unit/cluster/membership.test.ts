/*
 * Membership (src/cluster/membership.ts) over a nodes table held in memory:
 * a lookup of a node that registered after this node's last read of the
 * table waits for a new read instead of answering "unknown" (the owner of a
 * lease is always registered before it claims), lookups that miss together
 * share one read, and a node that is not in the table at all answers
 * undefined.
 */
import t from 'tap'
import { Membership } from '../../../src/cluster/membership.js'
import type { NodeRow } from '../../../src/cluster/clusterStore.js'

/** A nodes table in memory that counts its reads. */
function fakeTable(): { rows: NodeRow[]; reads: number; store: ConstructorParameters<typeof Membership>[0] } {
  const table = {
    rows: [] as NodeRow[],
    reads: 0,
    store: {
      registerNode: async (internalUrl: string) => {
        table.rows.push({ id: 'self', internalUrl, startedAtMs: 0, heartbeatAtMs: 0 })
      },
      heartbeat: async () => true,
      nodes: async () => {
        table.reads += 1
        return [...table.rows]
      },
    },
  }
  return table
}

t.test('a node registered just after the last read is found, not reported gone', async (t) => {
  const table = fakeTable()
  const membership = new Membership(table.store, 'self', 60_000)
  await membership.join('http://self')
  t.teardown(() => membership.leave())
  table.rows.push({ id: 'peer', internalUrl: 'http://peer', startedAtMs: 0, heartbeatAtMs: 0 })
  t.equal(await membership.urlOf('peer'), 'http://peer')
  t.equal(await membership.urlOf('self'), 'http://self')
})

t.test('lookups that miss together share one read; a node absent from the table is undefined', async (t) => {
  const table = fakeTable()
  const membership = new Membership(table.store, 'self', 60_000)
  await membership.join('http://self')
  t.teardown(() => membership.leave())
  const readsBefore = table.reads
  const answers = await Promise.all([membership.urlOf('gone-1'), membership.urlOf('gone-2'), membership.urlOf('gone-3')])
  t.same(answers, [undefined, undefined, undefined])
  t.equal(table.reads - readsBefore, 1, 'one read of the table for the three lookups')
})

t.test('a failed read of the table fails the lookup (the caller answers 503), and the next lookup reads again', async (t) => {
  const table = fakeTable()
  const membership = new Membership(table.store, 'self', 60_000)
  await membership.join('http://self')
  t.teardown(() => membership.leave())
  const nodes = table.store.nodes
  table.store.nodes = async () => {
    throw new Error('connection lost')
  }
  await t.rejects(membership.urlOf('peer'), /connection lost/)
  table.store.nodes = nodes
  table.rows.push({ id: 'peer', internalUrl: 'http://peer', startedAtMs: 0, heartbeatAtMs: 0 })
  t.equal(await membership.urlOf('peer'), 'http://peer')
})
