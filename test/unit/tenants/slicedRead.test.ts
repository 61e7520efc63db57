/*
 * The parts of a read in slices, without a server: the sort in steps gives
 * what a stable Array.sort gives; a plan run as steps pauses and gives what
 * a plain scan gives; the heavy-read budget is a token bucket (refill,
 * debt, the wait until room); a sliced read is light when it ends in its
 * first slice, heavy otherwise, and refused with 429 once the budget is
 * spent.
 */
import t from 'tap'
import { ApiError } from '../../../src/domain/errors.js'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { User } from '../../../src/domain/resources/user.js'
import { HeavyReadBudget } from '../../../src/tenants/heavyReadBudget.js'
import { SlicedRead } from '../../../src/tenants/slicedRead.js'
import { runInTurns, type Steps } from '../../../src/engine/steps.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { compileFilter } from '../../../src/query/filterCompiler.js'
import { SCAN_STEP_RECORDS } from '../../../src/query/listQuery.js'
import { recordComparator, parseOrderBy } from '../../../src/query/orderBy.js'
import { planList } from '../../../src/query/plan.js'
import { SORT_STEP_MOVES, sortInSteps } from '../../../src/query/sortInSteps.js'

/** Runs steps to the end, counting the pauses. */
function drain<T>(steps: Steps<T>): { value: T; pauses: number } {
  let pauses = 0
  for (;;) {
    const next = steps.next()
    if (next.done === true) return { value: next.value, pauses }
    pauses += 1
  }
}

t.test('sortInSteps is a stable sort that pauses', async (t) => {
  let seed = 7
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed / 2 ** 31
  }
  const items = Array.from({ length: SORT_STEP_MOVES * 5 + 123 }, (_, index) => ({ key: Math.floor(random() * 1000), index }))
  const byKey = (a: { key: number }, b: { key: number }) => a.key - b.key
  const { value, pauses } = drain(sortInSteps(items, byKey))
  t.same(value, [...items].sort(byKey), 'the same order as Array.sort, ties in their first order')
  t.ok(pauses > 5, `paused (${pauses} times)`)
  t.equal(items[0]?.index, 0, 'the input is left as it was')
  t.same(drain(sortInSteps([3, 1, 2], (a, b) => a - b)), { value: [1, 2, 3], pauses: 0 }, 'a short array in one go')
})

t.test('a plan run as steps pauses and answers what a scan answers', async (t) => {
  const state = new TenantState('steps')
  const user = buildRecord(User, { email: 'u@x.test', firstName: 'U' }, 0)
  state.applyOp({ op: 'put', type: 'User', rec: user })
  for (let index = 0; index < SCAN_STEP_RECORDS * 12; index += 1) {
    const rec = buildRecord(TimeRecord, { user: user.id, start: Date.UTC(2026, 0, 1) + index * 997_000, duration: 1000 * (index % 11), description: `d${index % 17}` }, index)
    state.applyOp({ op: 'put', type: 'TimeRecord', rec })
  }
  const caller = { userId: user.id, superuser: true }
  const all = [...state.collection('TimeRecord').values()]
  const query = new Map([
    ['$filter', "substringof('1', description)"],
    ['$orderby', 'description desc,duration'],
    ['$top', '30'],
    ['$skip', '4500'],
  ])
  const plan = planList(TimeRecord, query)
  const predicate = compileFilter(TimeRecord, query.get('$filter') as string)
  const expected = all.filter((rec) => predicate.test(rec, state)).sort(recordComparator(parseOrderBy(TimeRecord, query.get('$orderby')), state))

  const listed = drain(plan.runSteps(state, caller, { kind: 'all' }))
  t.same(
    listed.value.map((rec) => rec.id),
    expected.slice(4500, 4530).map((rec) => rec.id),
    'a sorted page far down',
  )
  t.ok(listed.pauses >= 12, 'the list paused at least once per step of candidates')
  const counted = drain(plan.countSteps(state, caller, { kind: 'all' }))
  t.equal(counted.value, expected.length)
  t.ok(counted.pauses >= 11, 'the count paused')
  const visited: string[] = []
  const each = drain(plan.eachMatching(state, caller, { kind: 'all' }, (rec) => visited.push(rec.id)))
  t.same(visited.sort(), expected.map((rec) => rec.id).sort(), 'eachMatching visits every match')
  t.ok(each.pauses >= 11)
  t.same(await runInTurns(plan.runSteps(state, caller, { kind: 'all' })), listed.value, 'run over event-loop turns: the same answer')
})

t.test('the heavy-read budget is a token bucket', async (t) => {
  const budget = new HeavyReadBudget(100)
  t.notOk(budget.exhausted(0), 'full at first')
  budget.spend(60, 0)
  t.notOk(budget.exhausted(0), '40 ms left')
  budget.spend(90, 10)
  t.ok(budget.exhausted(10), 'in debt: 40 + 1 refilled − 90')
  t.equal(budget.msUntilRoom(10), Math.ceil(((49 + 1) * 1000) / 100), 'room again once the debt is refilled')
  t.ok(budget.exhausted(400))
  t.notOk(budget.exhausted(600), 'refilled at 100 ms per second')
  t.equal(budget.leftAt(10_000), 100, 'never more than one second of budget')
  const off = new HeavyReadBudget(0)
  off.spend(1e9, 0)
  t.notOk(off.exhausted(0), 'a budget of 0 is off')
})

t.test('a sliced read: light at once, heavy in slices, refused when the budget is spent', async (t) => {
  function* steps(count: number): Steps<number> {
    for (let index = 0; index < count; index += 1) yield
    return count
  }
  const budget = new HeavyReadBudget(1000)
  const light = new SlicedRead(steps(0), budget, 0)
  t.ok(light.first(), 'a read without a pause ends in its first slice')
  t.equal(light.value, 0)
  t.equal(budget.leftAt(performance.now()), 1000, 'a light read spends nothing')

  const heavy = new SlicedRead(steps(5), budget, 0)
  t.notOk(heavy.first(), 'a read that pauses past its slice needs more')
  t.equal(await heavy.rest(), 5)

  budget.spend(5000, performance.now())
  t.ok(new SlicedRead(steps(0), budget, 0).first(), 'a light read goes on with the budget spent')
  const refused = new SlicedRead(steps(5), budget, 1000)
  let thrown: unknown = null
  try {
    refused.first()
  } catch (error) {
    thrown = error
  }
  t.ok(thrown instanceof ApiError && thrown.code === 'TL01-9010' && thrown.status === 429, 'a heavy read is refused with 429')
  t.match((thrown as ApiError).headers['Retry-After'], /^[1-9]\d*$/, 'and Retry-After in whole seconds')
})
