/*
 * Batch transactions in the tenant layer (src/tenants/tenantBatch.ts),
 * without HTTP: the items run in order on one shared transaction, an item
 * that fails is rolled back to its savepoint, a transaction group runs at
 * the place of its first item and is rolled back whole when one of its
 * items fails (the others are not applied), a throw rolls the whole batch
 * back and commits nothing, and what remains is committed once.
 */
import t from 'tap'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import { HeavyReadBudget } from '../../../src/tenants/heavyReadBudget.js'
import type { Op } from '../../../src/engine/logEntry.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { runTenantBatch, type BatchAccess, type BatchTenant } from '../../../src/tenants/tenantBatch.js'

const Project = resourceByType('Project')

/** A tenant whose commits are recorded instead of logged. */
function fakeTenant(): { tenant: BatchTenant; commits: Op[][] } {
  const commits: Op[][] = []
  const tenant: BatchTenant = {
    state: new TenantState('acme'),
    exclusive: async (job) => job(),
    commit: async (tx) => {
      commits.push([...tx.ops])
    },
    heavyReads: new HeavyReadBudget(1000),
    sliceMs: 5,
  }
  return { tenant, commits }
}

/** An item: writes a project named `name`, then fails when `fails`. */
interface Item {
  name: string
  transaction?: string
  fails?: boolean
  throws?: boolean
}

function projectNames(state: TenantState): string[] {
  return [...state.collection('Project').values()].map((rec) => String(rec.name)).sort()
}

async function run(tenant: BatchTenant, items: readonly Item[], ran: string[] = []): Promise<string[]> {
  return runTenantBatch(tenant, {
    transactions: items.map((item) => item.transaction),
    run: async (index, access: BatchAccess) => {
      const item = items[index] as Item
      ran.push(item.name)
      await access.write((tx) => tx.put('Project', buildRecord(Project, { name: item.name }, tx.now)))
      if (item.throws === true) throw new Error(`a bug in ${item.name}`)
      const seen = await access.read((state) => projectNames(state))
      return { answer: `${item.name}: ${item.fails === true ? 'failed' : 'ok'} (sees ${seen.join(',')})`, failed: item.fails === true }
    },
    notApplied: (index, cause) => `${items[index]?.name}: not applied, ${items[cause]?.name} failed`,
  })
}

t.test('items run in order on one transaction; a failed item is rolled back alone; one commit', async (t) => {
  const { tenant, commits } = fakeTenant()
  const answers = await run(tenant, [{ name: 'a' }, { name: 'b', fails: true }, { name: 'c' }])
  t.same(answers, ['a: ok (sees a)', 'b: failed (sees a,b)', 'c: ok (sees a,c)'], 'each item sees the earlier items that stayed')
  t.same(projectNames(tenant.state), ['a', 'c'])
  t.equal(commits.length, 1, 'one commit for the whole batch')
  t.equal(commits[0]?.length, 2, 'holding the writes of the items that stayed')
})

t.test('a transaction group runs at its first item and is rolled back whole when one item fails', async (t) => {
  const { tenant, commits } = fakeTenant()
  const ran: string[] = []
  const answers = await run(tenant, [{ name: 'g1', transaction: 'g' }, { name: 'x' }, { name: 'g2', transaction: 'g', fails: true }, { name: 'g3', transaction: 'g' }], ran)
  t.same(ran, ['g1', 'g2', 'x'], 'the group first, up to its failed item; its later items never run')
  t.same(answers, ['g1: not applied, g2 failed', 'x: ok (sees x)', 'g2: failed (sees g1,g2)', 'g3: not applied, g2 failed'])
  t.same(projectNames(tenant.state), ['x'])
  t.equal(commits.length, 1)
})

t.test('an item that throws rolls the whole batch back and commits nothing', async (t) => {
  const { tenant, commits } = fakeTenant()
  await t.rejects(run(tenant, [{ name: 'a' }, { name: 'b', throws: true }, { name: 'c' }]), /a bug in b/)
  t.same(projectNames(tenant.state), [], 'nothing of the batch stays in memory')
  t.equal(commits.length, 0)
})

t.test("a write that throws inside an item is rolled back to the write's savepoint", async (t) => {
  const { tenant, commits } = fakeTenant()
  const answers = await runTenantBatch(tenant, {
    transactions: [undefined],
    run: async (_, access) => {
      await access.write((tx) => tx.put('Project', buildRecord(Project, { name: 'kept' }, tx.now)))
      await t.rejects(
        access.write((tx) => {
          tx.put('Project', buildRecord(Project, { name: 'dropped' }, tx.now))
          throw new Error('refused')
        }),
      )
      return { answer: projectNames(await access.read((state) => state)).join(','), failed: false }
    },
    notApplied: () => '',
  })
  t.same(answers, ['kept'])
  t.equal(commits[0]?.length, 1)
})
