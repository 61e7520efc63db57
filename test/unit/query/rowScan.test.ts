/*
 * What a scan keeps across reads of one collection (query/rowScan.ts): the
 * collection's binding, a filter compiled over its rows once, the answers
 * a filter remembered per pool code, the record made last. Each must stay
 * true through writes between reads: a freed pool code given to another
 * text, a row written over. And a descending read of an index in date
 * order reads each row's date once (engine/orderedRows.ts).
 */
import t from 'tap'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { Client } from '../../../src/domain/resources/client.js'
import { Project } from '../../../src/domain/resources/project.js'
import { User } from '../../../src/domain/resources/user.js'
import type { Rec } from '../../../src/domain/schema.js'
import { OrderedRows } from '../../../src/engine/orderedRows.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { compiledFilter } from '../../../src/query/compiledFilters.js'
import { planList } from '../../../src/query/plan.js'
import { RowBinding } from '../../../src/query/rowScan.js'

function tenant(): { state: TenantState; owner: Rec; clients: Rec[] } {
  const state = new TenantState('rowscan')
  const owner = buildRecord(User, { email: 'owner@x.test', firstName: 'O' }, 0)
  const clients = ['C1', 'C2'].map((name) => buildRecord(Client, { name }, 0))
  state.applyOp({ op: 'put', type: 'User', rec: owner })
  for (const client of clients) state.applyOp({ op: 'put', type: 'Client', rec: client })
  return { state, owner, clients }
}

const all = { kind: 'all' } as const

/** The ids a filter lists, and what the record-based predicate says of every project: they must agree. */
function listed(state: TenantState, owner: Rec, filter: string): { got: string[]; expected: string[] } {
  const caller = { userId: owner.id, superuser: true }
  const got = planList(Project, new Map([['$filter', filter]]))
    .run(state, caller, all)
    .map((rec) => rec.id)
    .sort()
  const test = compiledFilter(Project, filter)
  const expected = [...state.collection('Project').values()]
    .filter((rec) => rec.trashItem == null && test.test(rec, state))
    .map((rec) => rec.id)
    .sort()
  return { got, expected }
}

t.test('a filter is compiled over a collection’s rows once, and answers the same on every read', async (t) => {
  const { state, owner } = tenant()
  for (let index = 0; index < 10; index += 1) state.applyOp({ op: 'put', type: 'Project', rec: buildRecord(Project, { name: `P${index}`, owner: owner.id }, 0) })
  const collection = state.collection('Project')
  t.equal(RowBinding.of(collection), RowBinding.of(collection), 'one binding per collection')
  const filter = compiledFilter(Project, "startswith(name, 'P1')")
  const binding = RowBinding.of(collection)
  t.equal(filter.bindRows(binding), filter.bindRows(binding), 'the predicate over rows is kept with the filter')
  t.not(filter.bindRows(new RowBinding(collection)), filter.bindRows(binding), 'another binding gets its own')
  const first = listed(state, owner, "startswith(name, 'P1')")
  t.same(first.got, first.expected)
  t.same(listed(state, owner, "startswith(name, 'P1')"), first, 'read again: the same')
})

t.test('answers remembered per pool code hold when the pool gives a freed code to another text between reads', async (t) => {
  const { state, owner } = tenant()
  const alpha = buildRecord(Project, { name: 'Alpha', owner: owner.id }, 0)
  const other = buildRecord(Project, { name: 'Other', owner: owner.id }, 0)
  state.applyOp({ op: 'put', type: 'Project', rec: alpha })
  state.applyOp({ op: 'put', type: 'Project', rec: other })
  const filter = "startswith(name, 'A')"
  t.same(listed(state, owner, filter).got, [alpha.id], 'Alpha starts with A')
  const pool = state.collection('Project').pool
  const alphaCode = pool.codeOf('Alpha')
  // Alpha's only row says something else: its code is free; the next new text takes it.
  state.applyOp({ op: 'put', type: 'Project', rec: { ...alpha, name: 'Beta', version: alpha.version + 1 } })
  const zeta = buildRecord(Project, { name: 'Zeta', owner: owner.id }, 0)
  state.applyOp({ op: 'put', type: 'Project', rec: zeta })
  t.equal(pool.codeOf('Zeta'), alphaCode, 'Zeta has the code Alpha had')
  const after = listed(state, owner, filter)
  t.same(after.got, after.expected, 'the remembered answer of the code is not Zeta’s')
  t.same(after.got, [], 'no project starts with A now')
  state.applyOp({ op: 'put', type: 'Project', rec: buildRecord(Project, { name: 'Apex', owner: owner.id }, 0) })
  const apex = listed(state, owner, filter)
  t.same(apex.got, apex.expected, 'a new text that matches is found')
  t.equal(apex.got.length, 1)
})

t.test('the record a scan made last is made again once its row is written over', async (t) => {
  const { state, owner, clients } = tenant()
  const [c1, c2] = clients as [Rec, Rec]
  const project = buildRecord(Project, { name: 'Only', owner: owner.id, client: c1.id }, 0)
  state.applyOp({ op: 'put', type: 'Project', rec: project })
  // client/name is read through the record (not a stored field): the scan makes the record of the row.
  t.same(listed(state, owner, "client/name eq 'C1'").got, [project.id])
  state.applyOp({ op: 'put', type: 'Project', rec: { ...project, client: c2.id, version: project.version + 1 } })
  const moved = listed(state, owner, "client/name eq 'C1'")
  t.same(moved.got, moved.expected)
  t.same(moved.got, [], 'the project’s client is C2 now')
  t.same(listed(state, owner, "client/name eq 'C2'").got, [project.id])
})

t.test('a descending read in date order gives runs of equal dates by id, reading each row’s date once', async (t) => {
  // Rows 0..19; dates with runs of equal ones; ids compare as the row numbers do.
  const dates = [5, 1, 3, 3, 3, 9, 7, 7, 2, 8, 8, 8, 8, 4, 6, 0, 0, 1, 5, 9].map((day) => day * 1000)
  let reads = 0
  const order = {
    date: (row: number) => {
      reads += 1
      return dates[row] as number
    },
    compareIds: (a: number, b: number) => a - b,
  }
  const rows = new OrderedRows(order)
  for (let row = 0; row < dates.length; row += 1) rows.add(row)
  const expected = [...dates.keys()].sort((a, b) => (dates[b] as number) - (dates[a] as number) || a - b)
  t.same([...(rows.inOrder(true) ?? [])], expected, 'later dates first, equal dates by id')
  reads = 0
  const walked = [...(rows.inOrder(true) ?? [])]
  t.same(walked, expected)
  t.ok(reads <= dates.length, `${reads} date reads for ${dates.length} rows`)
})
