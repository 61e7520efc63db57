/*
 * Differential test of the planner: over random data and random filters,
 * a list read through an index returns exactly what a full scan with the
 * compiled predicate returns (same rows, same order, same page). The
 * filters pin indexed references, bound the range-indexed `begins`, and
 * pin `id` (read from the primary map: a live, a trashed or an unknown id).
 * Time records pinned to a project or a user and sorted by `start` (their
 * index order) are read from the index in order, and must equal the scan.
 * A view that declares a pin (projects/@own, projects/@member)
 * is read through it, and gives what its predicate gives over the whole
 * collection.
 */
import t from 'tap'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { Client } from '../../../src/domain/resources/client.js'
import { Project } from '../../../src/domain/resources/project.js'
import { ProjectMember } from '../../../src/domain/resources/projectMember.js'
import type { Rec } from '../../../src/domain/schema.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { User } from '../../../src/domain/resources/user.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { compileFilter } from '../../../src/query/filterCompiler.js'
import { parsePaging, runList } from '../../../src/query/listQuery.js'
import { parseOrderBy } from '../../../src/query/orderBy.js'
import { planList } from '../../../src/query/plan.js'
import { findView, viewScope, type View } from '../../../src/http/routes/views.js'

let seed = 42
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31
  return seed / 2 ** 31
}
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T

const state = new TenantState('planner')
const users = Array.from({ length: 4 }, (_, index) => buildRecord(User, { email: `u${index}@x.test`, firstName: `U${index}` }, 0))
const clients = Array.from({ length: 5 }, (_, index) => buildRecord(Client, { name: `C${index}` }, 0))
for (const user of users) state.applyOp({ op: 'put', type: 'User', rec: user })
for (const client of clients) state.applyOp({ op: 'put', type: 'Client', rec: client })
for (let index = 0; index < 400; index += 1) {
  const rec = buildRecord(
    Project,
    {
      name: `P${Math.floor(random() * 50)}`,
      owner: pick(users).id,
      client: random() < 0.2 ? null : pick(clients).id,
      timeBudget: random() < 0.1 ? null : Math.floor(random() * 10),
      active: random() < 0.5,
      begins: random() < 0.1 ? null : Date.UTC(2024, 0, 1) + Math.floor(random() * 40) * 43_200_000 + Math.floor(random() * 3) * 1000,
    },
    Math.floor(random() * 1000),
  )
  state.applyOp({ op: 'put', type: 'Project', rec: random() < 0.1 ? { ...rec, trashItem: 'trashed' } : rec })
}

const projectIds = [...state.collection('Project').values()].map((rec) => rec.id)

function randomCondition(): string {
  return pick([
    () => `id eq '${random() < 0.9 ? pick(projectIds) : 'no-such-id'}'`,
    () => `client/id eq '${pick(clients).id}'`,
    () => `owner/id eq '${pick(users).id}'`,
    () => 'client eq null',
    () => `timeBudget ${pick(['eq', 'lt', 'ge', 'ne'])} ${Math.floor(random() * 10)}`,
    () => `active eq ${pick(['true', 'false'])}`,
    () => `startswith(name, 'P${Math.floor(random() * 5)}')`,
    () => `begins ${pick(['gt', 'ge', 'lt', 'le'])} datetime'2024-01-${String(1 + Math.floor(random() * 20)).padStart(2, '0')}T12:00:00Z'`,
    () => `begins eq null`,
  ])()
}

function randomFilter(depth = 0): string {
  if (depth > 2 || random() < 0.4) return randomCondition()
  const op = pick(['and', 'and', 'or'])
  const left = randomFilter(depth + 1)
  const right = randomFilter(depth + 1)
  return random() < 0.15 ? `not (${left} ${op} ${right})` : `(${left}) ${op} (${right})`
}

const caller = { userId: users[0]?.id as string, superuser: true }

t.test('index plans equal full scans', async (t) => {
  let indexed = 0
  let byId = 0
  for (let round = 0; round < 300; round += 1) {
    const filter = randomFilter()
    const query = new Map<string, string>([['$filter', filter]])
    if (random() < 0.5) query.set('$orderby', pick(['name', 'timeBudget desc', 'client/name, name desc', 'createdAt', 'begins', 'begins desc', 'begins desc, name']))
    if (random() < 0.5) query.set('$top', String(1 + Math.floor(random() * 20)))
    if (random() < 0.3) query.set('$skip', String(Math.floor(random() * 10)))
    const compiled = compileFilter(Project, filter)
    if (compiled.equalities.size > 0) indexed += 1
    if (compiled.equalities.has('id')) byId += 1
    const viaPlan = planList(Project, query).run(state, caller, { kind: 'all' })
    const scan = runList(state.collection('Project').values(), (rec) => rec.trashItem === null && compiled.test(rec, state), parseOrderBy(Project, query.get('$orderby')), parsePaging(query), state)
    const unsorted = !query.has('$orderby')
    const normalize = (recs: { id: string }[]) => (unsorted && !query.has('$top') && !query.has('$skip') ? recs.map((rec) => rec.id).sort() : recs.map((rec) => rec.id))
    if (unsorted && (query.has('$top') || query.has('$skip'))) {
      // Without a sort, page contents depend on the candidate order; compare as subsets of the full answer.
      const all = new Set(runList(state.collection('Project').values(), (rec) => rec.trashItem === null && compiled.test(rec, state), [], { top: 1000, skip: 0 }, state).map((rec) => rec.id))
      t.ok(
        viaPlan.every((rec) => all.has(rec.id)),
        `page within the answer: ${filter}`,
      )
      continue
    }
    t.same(normalize(viaPlan), normalize(scan), filter)
  }
  t.ok(indexed > 50, `many filters used an index (${indexed})`)
  t.ok(byId > 20, `many filters pinned an id (${byId})`)
})

t.test('id eq reads the primary map: no scan of the collection', async (t) => {
  const collection = state.collection('Project')
  // The planner scans a collection's rows (Collection.rows: it reads columns, not records).
  const rows = collection.rows.bind(collection)
  let scans = 0
  collection.rows = () => {
    scans += 1
    return rows()
  }
  t.teardown(() => Reflect.deleteProperty(collection, 'rows'))
  const target = [...collection.values()].find((rec) => rec.trashItem === null)
  if (target === undefined) throw new Error('the data has no live project')
  const run = (filter: string) =>
    planList(Project, new Map([['$filter', filter]]))
      .run(state, caller, { kind: 'all' })
      .map((rec) => rec.id)
  t.same(run(`id eq '${target.id}' and active eq ${String(target.active)}`), [target.id])
  t.same(run(`'${target.id}' eq id`), [target.id], 'literal on the left')
  t.same(run("id eq 'no-such-id'"), [])
  t.equal(scans, 0, 'no filter with an id pin scanned the collection')
  t.same(run(`id eq '${target.id}' or name eq 'x'`), [target.id])
  t.equal(scans, 1, 'an id under or is no pin: that filter scans (so the count can fail)')
})

t.test('a view with a pin reads its records through it, and gives what its predicate accepts', async (t) => {
  // Each user is a member of a few projects; one membership of each is in the trash.
  const liveProjects = [...state.collection('Project').values()].filter((rec) => rec.trashItem === null)
  for (const [index, user] of users.entries()) {
    for (let member = 0; member < 6; member += 1) {
      const rec = buildRecord(ProjectMember, { user: user.id, project: (liveProjects[(index * 37 + member * 11) % liveProjects.length] as { id: string }).id }, 0)
      state.applyOp({ op: 'put', type: 'ProjectMember', rec: member === 0 ? { ...rec, trashItem: 'trashed' } : rec })
    }
  }
  for (const [decl, name] of [
    [Project, '@own'],
    [Project, '@member'],
  ] as const) {
    const view = findView(decl.type, name) as View
    let tested = 0
    const counted: View = {
      prepare: (viewState, principal) => {
        const prepared = view.prepare(viewState, principal)
        const accepts = (rec: Rec) => {
          tested += 1
          return prepared.accepts(rec)
        }
        return prepared.pin === undefined ? { accepts } : { accepts, pin: prepared.pin }
      },
    }
    const unpinned: View = { prepare: (viewState, principal) => ({ accepts: counted.prepare(viewState, principal).accepts }) }
    for (const user of users) {
      const principal = { userId: user.id, superuser: true, isOwner: false, tokenId: 'token' }
      const plan = planList(
        decl,
        new Map([
          ['$orderby', 'createdAt'],
          ['$top', '1000'],
        ]),
      )
      tested = 0
      const viaPin = plan.run(state, principal, viewScope(counted, principal)).map((rec) => rec.id)
      const pinnedTests = tested
      tested = 0
      const scanned = plan.run(state, principal, viewScope(unpinned, principal)).map((rec) => rec.id)
      t.same(viaPin, scanned, `${decl.type}/${name} for ${user.id}: the records the predicate accepts`)
      t.ok(viaPin.length > 0, `${decl.type}/${name}: not empty`)
      t.ok(pinnedTests < tested, `${decl.type}/${name}: ${pinnedTests} records tested through the pin, ${tested} by a scan`)
    }
  }
})

t.test('lists pinned to a value and sorted by the index order equal full scans, and read the index in order', async (t) => {
  const records = new TenantState('planner-time')
  for (const user of users) records.applyOp({ op: 'put', type: 'User', rec: user })
  const projects = Array.from({ length: 3 }, (_, index) => buildRecord(Project, { name: `TP${index}` }, 0))
  for (const project of projects) records.applyOp({ op: 'put', type: 'Project', rec: project })
  const dayMs = 86_400_000
  for (let index = 0; index < 600; index += 1) {
    const rec = buildRecord(
      TimeRecord,
      {
        user: pick(users).id,
        project: random() < 0.1 ? null : pick(projects).id,
        // Few distinct starts, so ties (broken by id) are common; some null.
        start: random() < 0.08 ? null : Date.UTC(2024, 0, 1) + Math.floor(random() * 30) * dayMs,
        duration: Math.floor(random() * 8) * 900_000,
        billable: random() < 0.5,
      },
      index,
    )
    records.applyOp({ op: 'put', type: 'TimeRecord', rec: random() < 0.1 ? { ...rec, trashItem: 'trashed' } : rec })
  }
  const collection = records.collection('TimeRecord')
  // The planner reads an index in order as rows (Collection.orderedRows; orderedLookup gives the same as records).
  const orderedRows = collection.orderedRows.bind(collection)
  let readInOrder = 0
  collection.orderedRows = (...args) => {
    const found = orderedRows(...args)
    if (found !== null) readInOrder += 1
    return found
  }
  t.teardown(() => Reflect.deleteProperty(collection, 'orderedRows'))
  for (let round = 0; round < 200; round += 1) {
    const pins = [`project/id eq '${pick(projects).id}'`, `user/id eq '${pick(users).id}'`, `project/id eq '${pick(projects).id}' and user/id eq '${pick(users).id}'`]
    const extra = pick(['', ' and billable eq true', ' and duration gt 1800000', " and start ge datetime'2024-01-10T00:00:00Z'"])
    const filter = `${pick(pins)}${extra}`
    const query = new Map<string, string>([
      ['$filter', filter],
      ['$orderby', pick(['start', 'start desc', 'start asc'])],
      ['$top', String(1 + Math.floor(random() * 40))],
    ])
    if (random() < 0.4) query.set('$skip', String(Math.floor(random() * 30)))
    const compiled = compileFilter(TimeRecord, filter)
    const viaPlan = planList(TimeRecord, query).run(records, caller, { kind: 'all' })
    const scan = runList(collection.values(), (rec) => rec.trashItem === null && compiled.test(rec, records), parseOrderBy(TimeRecord, query.get('$orderby')), parsePaging(query), records)
    t.same(
      viaPlan.map((rec) => rec.id),
      scan.map((rec) => rec.id),
      `${filter} ${query.get('$orderby')} top ${query.get('$top')} skip ${query.get('$skip') ?? 0}`,
    )
  }
  t.equal(readInOrder, 200, 'every list read its pinned index in order')
})
