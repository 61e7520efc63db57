/*
 * A write in slices (src/tenants/slicedWrite.ts) without HTTP: its steps
 * run to the end, giving the event loop a turn once a slice is used up (and
 * not before); a step that throws rolls the write back, also giving the
 * event loop turns while it undoes; inside a batch it writes on the batch's
 * transaction, and a step that throws rolls back its own writes only, to
 * its savepoint.
 */
import t from 'tap'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import type { Op } from '../../../src/engine/logEntry.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { WriteTx } from '../../../src/engine/writeTx.js'
import { HeavyReadBudget } from '../../../src/tenants/heavyReadBudget.js'
import { decideInSlices, ROLLBACK_STEP_OPS } from '../../../src/tenants/slicedWrite.js'
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
  const tx = new WriteTx(new TenantState('acme'), 0)
  let other = false
  setImmediate(() => (other = true))
  t.equal(
    await decideInSlices(
      tx,
      0,
      steps(10, () => other),
      4,
    ),
    true,
    'slices of 4 ms: other work ran before the last step',
  )
  other = false
  setImmediate(() => (other = true))
  t.equal(
    await decideInSlices(
      tx,
      0,
      steps(10, () => other),
      10_000,
    ),
    false,
    'one slice long enough for all: nothing ran between the steps',
  )
  await new Promise((resolve) => setImmediate(resolve))
})

t.test('a step that throws: the write undone, the event loop turning meanwhile, then the error', async (t) => {
  const state = new TenantState('acme')
  const tx = new WriteTx(state, 0)
  const count = () => state.collection(Tag.type).size
  const made = 4 * ROLLBACK_STEP_OPS
  let seenMeanwhile = -1
  function* failing(): Generator<void, never, void> {
    for (let index = 0; index < made; index += 1) {
      tx.put(Tag.type, buildRecord(Tag, { name: `tag-${index}` }, 0))
      if (index % 100 === 99) yield
    }
    setImmediate(() => (seenMeanwhile = count()))
    throw new Error('refused after its writes')
  }
  // Slices of 0 ms: a turn after every step, and after every ROLLBACK_STEP_OPS undone.
  await t.rejects(decideInSlices(tx, 0, failing(), 0), /refused after its writes/)
  t.equal(count(), 0, 'nothing of the write is left')
  t.equal(tx.ops.length, 0)
  t.ok(seenMeanwhile > 0 && seenMeanwhile < made, `other work ran while it was undone (it saw ${seenMeanwhile} of ${made} tags)`)
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
