/*
 * A write in slices (src/tenants/slicedWrite.ts) without HTTP: its steps
 * run to the end, giving the event loop a turn once a slice is used up (and
 * not before); inside a batch it writes on the batch's transaction, and a
 * step that throws rolls back its own writes only, to its savepoint.
 */
import t from 'tap'
import { buildRecord } from '../../../src/domain/records.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import type { Op } from '../../../src/engine/logEntry.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import type { WriteTx } from '../../../src/engine/writeTx.js'
import { HeavyReadBudget } from '../../../src/tenants/heavyReadBudget.js'
import { decideInSlices } from '../../../src/tenants/slicedWrite.js'
import { runTenantBatch, type BatchTenant } from '../../../src/tenants/tenantBatch.js'

const Tag = resourceByType('Tag')

function busyFor(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // spinning: a step that takes its time
  }
}

/** Steps of 2 ms each; the last one says whether a callback queued before the write ran meanwhile. */
function* steps(count: number, otherRan: () => boolean): Generator<void, boolean, void> {
  for (let step = 0; step < count; step += 1) {
    busyFor(2)
    yield
  }
  return otherRan()
}

t.test('the steps run to their end, the event loop turning between slices and not within one', async (t) => {
  let other = false
  setImmediate(() => (other = true))
  t.equal(await decideInSlices(steps(10, () => other), 4), true, 'slices of 4 ms: other work ran before the last step')
  other = false
  setImmediate(() => (other = true))
  t.equal(await decideInSlices(steps(10, () => other), 10_000), false, 'one slice long enough for all: nothing ran between the steps')
  await new Promise((resolve) => setImmediate(resolve))
})

t.test('in a batch: the batch’s transaction, rolled back to its savepoint when a step throws', async (t) => {
  const commits: Op[][] = []
  const tenant: BatchTenant = {
    state: new TenantState('acme'),
    exclusive: async (job) => job(),
    commit: async (tx) => {
      commits.push([...tx.ops])
    },
    heavyReads: new HeavyReadBudget(1000),
    sliceMs: 1,
  }
  function* tags(tx: WriteTx, names: readonly string[], fails: boolean): Generator<void, number, void> {
    for (const name of names) {
      tx.put(Tag.type, buildRecord(Tag, { name }, tx.now))
      busyFor(2)
      yield
    }
    if (fails) throw new Error('refused after its writes')
    return names.length
  }
  const answers = await runTenantBatch(tenant, {
    transactions: [undefined, undefined],
    run: async (index, access) => {
      try {
        const made = await access.writeInSlices((tx) => tags(tx, index === 0 ? ['kept-1', 'kept-2'] : ['gone-1', 'gone-2', 'gone-3'], index === 1))
        return { answer: `made ${made}`, failed: false }
      } catch (error) {
        return { answer: (error as Error).message, failed: true }
      }
    },
    notApplied: () => 'not applied',
  })
  t.same(answers, ['made 2', 'refused after its writes'])
  t.same(
    [...tenant.state.collection(Tag.type).values()].map((rec) => rec.name),
    ['kept-1', 'kept-2'],
    'the failed write’s tags were rolled back, the earlier ones kept',
  )
  t.equal(commits.length, 1, 'one commit')
  t.same(
    commits[0]?.map((op) => (op.op === 'put' ? op.rec.name : op.id)),
    ['kept-1', 'kept-2'],
  )
})
