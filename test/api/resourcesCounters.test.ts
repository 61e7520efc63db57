/*
 * Live aggregates and the resource actions over HTTP: `append` counters
 * through creates, moves (tasks, time records, members, bills, projects
 * between clients), done, trash and restore (also of a user, whose
 * memberships go with it); a client's projects-count as each user sees it
 * (another user's personal project is not counted, its owner counts it);
 * bill sums (derived itemsPrice / totalPrice, also in $filter and
 * $orderby; a NO_VAT bill adds no VAT); bill numbers from
 * the account's sequence; impulse `$stop` / `$watchnotify`; project
 * `$activate` / `$deactivate`.
 */
import t from 'tap'
import { api, newUser, ref, type Api } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = api(client, 'counters', (await client.createTenant('counters')).token)
const ownerId = (await owner.get('users/@self')).json.id as string
const bert = await newUser(client, 'counters', owner, 'Bert')

/** Counter values of one object as `viewer` sees them, read from a list with `append`. */
async function countersOf(path: string, id: string, append: string, viewer: Api = owner): Promise<Record<string, unknown>> {
  const listed = await viewer.get(path, { append, $filter: `id eq '${id}'` })
  if (listed.status !== 200) throw new Error(`${listed.status} ${listed.text}`)
  return listed.json[0]
}

const projectCounters = (id: string) => countersOf('time/projects', id, 'timerecords-count,tasks-count,members-count')
const clientCounters = (id: string, viewer: Api = owner) => countersOf('time/clients', id, 'bills-count,projects-count', viewer)

t.test('project counters', async (t) => {
  const p1 = await owner.create('time/projects', { name: 'P1' })
  const p2 = await owner.create('time/projects', { name: 'P2' })
  t.match(await projectCounters(p1), { timeRecordsCount: 0, tasksCount: 0, membersCount: 0 })
  const list = await owner.get('time/projects', { $filter: `id eq '${p1}'` })
  t.equal(list.json[0].tasksCount, null, 'without append the counters are null')

  const taskA = await owner.create('time/tasks', { name: 'a', project: ref(p1) })
  const taskB = await owner.create('time/tasks', { name: 'b', project: ref(p1) })
  await owner.create('time/tasks', { name: 'done already', project: ref(p1), done: true })
  const record = await owner.create('time/timerecords', { project: ref(p1), duration: 1000 })
  await owner.create('time/timerecords', { project: ref(p1), duration: 1000 })
  await owner.create(`time/projects/${p1}/members`, { user: ref(bert.id) })
  const member = await owner.create(`time/projects/${p1}/members`, { user: ref(ownerId) })
  t.match(await projectCounters(p1), { timeRecordsCount: 2, tasksCount: 2, membersCount: 2 }, 'after creates (a done task does not count)')

  await owner.put(`time/tasks/${taskA}`, { project: ref(p2), version: 1 })
  t.match(await projectCounters(p1), { tasksCount: 1 }, 'a task moved away')
  t.match(await projectCounters(p2), { tasksCount: 1, timeRecordsCount: 0 }, 'a task moved in')
  await owner.put(`time/tasks/${taskB}`, { done: true, version: 1 })
  t.match(await projectCounters(p1), { tasksCount: 0 }, 'a task marked done')
  await owner.put(`time/tasks/${taskB}`, { done: null, version: 2 })
  t.match(await projectCounters(p1), { tasksCount: 1 }, 'done may be null again: counts')

  const trashedRecord = await owner.del(`time/timerecords/${record}`)
  const trashedMember = await owner.del(`time/projectmembers/${member}`)
  t.match(await projectCounters(p1), { timeRecordsCount: 1, membersCount: 1 }, 'after deletes to the trash')
  await owner.get(`trash/${trashedRecord.json.trashItem.id as string}/$restore`)
  await owner.get(`trash/${trashedMember.json.trashItem.id as string}/$restore`)
  t.match(await projectCounters(p1), { timeRecordsCount: 2, membersCount: 2, tasksCount: 1 }, 'after restores')

  const trashedProject = await owner.del(`time/projects/${p1}`)
  t.equal((await owner.get(`time/projects/${p1}/@deleted`)).status, 200)
  await owner.get(`trash/${trashedProject.json.trashItem.id as string}/$restore`)
  t.match(await projectCounters(p1), { timeRecordsCount: 2, membersCount: 2, tasksCount: 1 }, 'the cascade comes back with its project')

  const sorted = await owner.get('time/projects', { append: 'tasks-count', $filter: `id eq '${p1}' or id eq '${p2}'`, $orderby: 'name' })
  t.same(
    sorted.json.map((project: { tasksCount: number }) => project.tasksCount),
    [1, 1],
  )
})

t.test('client counters', async (t) => {
  const clientId = await owner.create('time/clients', { name: 'Counted' })
  const project = await owner.create('time/projects', { name: 'for client', client: ref(clientId) })
  await owner.create(`time/clients/${clientId}/projects`, { name: 'inner' })
  const bill = await owner.create('billing/bills', { client: ref(clientId) })
  t.match(await clientCounters(clientId), { billsCount: 1, projectsCount: 2 })
  const trashed = await owner.del(`billing/bills/${bill}`)
  await owner.put(`time/projects/${project}`, { client: null, version: 1 })
  t.match(await clientCounters(clientId), { billsCount: 0, projectsCount: 1 })
  await owner.get(`trash/${trashed.json.trashItem.id as string}/$restore`)
  t.match(await clientCounters(clientId), { billsCount: 1 })
  const single = await owner.get(`time/clients/${clientId}`, { append: 'projects-count' })
  t.equal(single.json.projectsCount, 1, 'append works on a single read too')
})

t.test('moves between parents: a time record, a member, a bill', async (t) => {
  const from = await owner.create('time/projects', { name: 'Move from' })
  const to = await owner.create('time/projects', { name: 'Move to' })
  const record = await owner.create('time/timerecords', { project: ref(from), duration: 1000 })
  const member = await owner.create(`time/projects/${from}/members`, { user: ref(bert.id) })
  t.match(await projectCounters(from), { timeRecordsCount: 1, membersCount: 1 })
  t.match(await projectCounters(to), { timeRecordsCount: 0, membersCount: 0 })

  const movedRecord = await owner.put(`time/timerecords/${record}`, { project: ref(to), version: 1 })
  t.equal(movedRecord.status, 200, movedRecord.text)
  t.match(await projectCounters(from), { timeRecordsCount: 0 }, 'a time record moved away')
  t.match(await projectCounters(to), { timeRecordsCount: 1 }, 'a time record moved in')
  await owner.put(`time/timerecords/${record}`, { project: null, version: 2 })
  t.match(await projectCounters(to), { timeRecordsCount: 0 }, 'a time record taken off any project')

  const movedMember = await owner.put(`time/projectmembers/${member}`, { project: ref(to), version: 1 })
  t.equal(movedMember.status, 200, `the declaration lets a member change project: ${movedMember.text}`)
  t.match(await projectCounters(from), { membersCount: 0 }, 'a member moved away')
  t.match(await projectCounters(to), { membersCount: 1 }, 'a member moved in')
  await owner.create(`time/projects/${from}/members`, { user: ref(bert.id) })
  const clash = await owner.put(`time/projectmembers/${member}`, { project: ref(from), version: 2 })
  t.equal(clash.status, 412, 'a move onto a project the user is already a member of is refused')
  t.match(await projectCounters(from), { membersCount: 1 }, 'and changes no counter')
  t.match(await projectCounters(to), { membersCount: 1 })

  const clientA = await owner.create('time/clients', { name: 'Bill from' })
  const clientB = await owner.create('time/clients', { name: 'Bill to' })
  const bill = await owner.create('billing/bills', { client: ref(clientA) })
  t.match(await clientCounters(clientA), { billsCount: 1 })
  await owner.put(`billing/bills/${bill}`, { client: ref(clientB), version: 1 })
  t.match(await clientCounters(clientA), { billsCount: 0 }, 'a bill moved away')
  t.match(await clientCounters(clientB), { billsCount: 1 }, 'a bill moved in')
})

t.test("members-count follows a user's trash and restore", async (t) => {
  const project = await owner.create('time/projects', { name: 'Team' })
  const dora = await newUser(client, 'counters', owner, 'Dora')
  await owner.create(`time/projects/${project}/members`, { user: ref(bert.id) })
  await owner.create(`time/projects/${project}/members`, { user: ref(dora.id) })
  t.match(await projectCounters(project), { membersCount: 2 })
  const trashed = await owner.del(`users/${dora.id}`)
  t.equal(trashed.status, 200, trashed.text)
  t.match(await projectCounters(project), { membersCount: 1 }, "the user's memberships went to the trash with it")
  t.same(await owner.ids(`time/projects/${project}/members`, { $filter: `user/id eq '${dora.id}'` }), [])
  const restored = await owner.get(`trash/${trashed.json.trashItem.id as string}/$restore`)
  t.equal(restored.status, 200, restored.text)
  t.match(await projectCounters(project), { membersCount: 2 }, 'and came back with it')
})

t.test("a client's projects-count as each user sees it (personal projects)", async (t) => {
  const cleo = await newUser(client, 'counters', owner, 'Cleo')
  const clientA = await owner.create('time/clients', { name: 'Seen by whom' })
  const clientB = await owner.create('time/clients', { name: 'Moved to' })

  /** projects-count for `viewer` and the inner collection's $count, which must agree. */
  async function seen(clientId: string, viewer: Api): Promise<{ counter: unknown; count: number }> {
    const counted = await viewer.get(`time/clients/${clientId}/projects/$count`)
    if (counted.status !== 200) throw new Error(`${counted.status} ${counted.text}`)
    return { counter: (await clientCounters(clientId, viewer)).projectsCount, count: Number(counted.text) }
  }
  async function check(clientId: string, expected: { owner: number; bert: number; cleo: number }, message: string): Promise<void> {
    for (const [name, viewer] of [
      ['owner', owner],
      ['bert', bert.api],
      ['cleo', cleo.api],
    ] as const) {
      t.same(await seen(clientId, viewer), { counter: expected[name], count: expected[name] }, `${message}: as ${name}`)
    }
  }

  await owner.create('time/projects', { name: 'shared', client: ref(clientA) })
  const bertsPersonal = await bert.api.create('time/projects', { name: "Bert's own", client: ref(clientA), personal: true })
  await check(clientA, { owner: 1, bert: 2, cleo: 1 }, "another user's personal project is not counted, its owner counts it")
  const ownersPersonal = await owner.create('time/projects', { name: "Olive's own", client: ref(clientA), personal: true })
  await check(clientA, { owner: 2, bert: 2, cleo: 1 }, 'the account owner counts only their own personal project')

  await bert.api.put(`time/projects/${bertsPersonal}`, { personal: false, version: 1 })
  await check(clientA, { owner: 3, bert: 2, cleo: 2 }, "made visible to all (the owner's personal one still counts only for the owner)")
  await bert.api.put(`time/projects/${bertsPersonal}`, { personal: true, version: 2 })
  await check(clientA, { owner: 2, bert: 2, cleo: 1 }, 'made personal again')

  await bert.api.put(`time/projects/${bertsPersonal}`, { client: ref(clientB), version: 3 })
  await check(clientA, { owner: 2, bert: 1, cleo: 1 }, 'a personal project moved away')
  await check(clientB, { owner: 0, bert: 1, cleo: 0 }, 'a personal project moved in')
  await bert.api.put(`time/projects/${bertsPersonal}`, { client: ref(clientA), personal: false, version: 4 })
  await check(clientA, { owner: 3, bert: 2, cleo: 2 }, 'moved back and made visible to all in one change')
  await check(clientB, { owner: 0, bert: 0, cleo: 0 }, 'nothing left behind')

  const trashed = await owner.del(`time/projects/${ownersPersonal}`)
  await check(clientA, { owner: 2, bert: 2, cleo: 2 }, 'a trashed personal project counts for nobody')
  await owner.get(`trash/${trashed.json.trashItem.id as string}/$restore`)
  await check(clientA, { owner: 3, bert: 2, cleo: 2 }, 'a restored one counts for its owner again')
})

t.test('a NO_VAT bill: totalPrice = itemsPrice, also when vatMode changes later', async (t) => {
  const bill = await owner.create('billing/bills', { description: 'no vat', vatMode: 'NO_VAT' })
  await owner.create(`billing/bills/${bill}/items`, { docIndex: 1, quantity: 1, unitPrice: 100 })
  await owner.create(`billing/bills/${bill}/vats`, { vatRate: 20, vatPrice: 20 })
  t.match((await owner.get(`billing/bills/${bill}`)).json, { itemsPrice: 100, totalPrice: 100 }, 'the VAT row adds nothing')
  t.same(await owner.ids('billing/bills', { $filter: `id eq '${bill}' and totalPrice eq 100` }), [bill], '$filter sees the same totalPrice')

  await owner.put(`billing/bills/${bill}`, { vatMode: 'DECLARE_VAT', version: 1 })
  t.match((await owner.get(`billing/bills/${bill}`)).json, { itemsPrice: 100, totalPrice: 120 }, 'switched to DECLARE_VAT: the VAT counts')
  await owner.put(`billing/bills/${bill}`, { vatMode: null, version: 2 })
  t.match((await owner.get(`billing/bills/${bill}`)).json, { totalPrice: 120 }, 'no vatMode: VAT rows count, as before this mode existed')
  await owner.put(`billing/bills/${bill}`, { vatMode: 'NO_VAT', version: 3 })
  t.match((await owner.get(`billing/bills/${bill}`)).json, { itemsPrice: 100, totalPrice: 100 }, 'back to NO_VAT')
  await owner.create(`billing/bills/${bill}/items`, { docIndex: 2, quantity: 2, unitPrice: 5 })
  t.match((await owner.get(`billing/bills/${bill}`)).json, { itemsPrice: 110, totalPrice: 110 }, 'an item added to a NO_VAT bill')
  const ordered = await owner.get('billing/bills', { $filter: `id eq '${bill}'`, $orderby: 'totalPrice desc', format: 'xml' })
  t.match(ordered.text, '<totalPrice>110</totalPrice>', 'XML shows the same')
  t.equal((await owner.del(`billing/bills/${bill}`)).status, 200, 'trashed: the bill sums test below sees only its own bills')
})

t.test('an append that does not apply is a 400', async (t) => {
  const wrong = await owner.get('time/projects', { append: 'bills-count' })
  t.equal(wrong.status, 400)
  t.equal(wrong.json.code, 'TL01-1105')
  t.equal((await owner.get('time/timerecords', { append: 'tasks-count' })).status, 400)
})

t.test('bill sums and numbers', async (t) => {
  const accountBefore = (await owner.get('accounts/@own')).json
  const first = await owner.post('billing/bills', { description: 'first' }, { response_object: true })
  const second = await owner.post('billing/bills', { description: 'second' }, { response_object: true })
  t.equal(second.json.docNumber, first.json.docNumber + 1, 'sequential numbers')
  t.equal(first.json.displayName, String(first.json.docNumber))
  const accountAfter = (await owner.get('accounts/@own')).json
  t.equal(accountAfter.docNumberSequence, second.json.docNumber, 'the account keeps the last number')
  t.equal(accountAfter.version, accountBefore.version + 2, 'each number taken is a change of the account')

  const bill = first.json.id as string
  const item1 = await owner.create(`billing/bills/${bill}/items`, { docIndex: 1, quantity: 2, unitPrice: 10.25 })
  const item2 = await owner.create(`billing/bills/${bill}/items`, { docIndex: 2, quantity: 0.333, unitPrice: 3 })
  await owner.create(`billing/bills/${bill}/items`, { docIndex: 3, quantity: 1 })
  const vat = await owner.create(`billing/bills/${bill}/vats`, { vatRate: 21, vatPrice: 4.51 })
  await owner.create(`billing/bills/${bill}/vats`, { vatRate: 10, vatPrice: 0.1 })
  let read = (await owner.get(`billing/bills/${bill}`)).json
  t.match(read, { itemsPrice: 21.5, totalPrice: 26.11 }, 'items 20.50 + 1.00 (0.999 rounded), VAT 4.61')
  t.equal((await owner.get(`billing/billitems/${item2}`)).json.price, 1, 'item price rounded to 2 decimals')

  await owner.put(`billing/billitems/${item1}`, { quantity: 4, version: 1 })
  read = (await owner.get(`billing/bills/${bill}`)).json
  t.match(read, { itemsPrice: 42, totalPrice: 46.61 }, 'after an item change')
  const trashedItem = await owner.del(`billing/billitems/${item1}`)
  await owner.del(`billing/billvats/${vat}`)
  t.match((await owner.get(`billing/bills/${bill}`)).json, { itemsPrice: 1, totalPrice: 1.1 }, 'trashed rows do not count')
  await owner.get(`trash/${trashedItem.json.trashItem.id as string}/$restore`)
  t.match((await owner.get(`billing/bills/${bill}`)).json, { itemsPrice: 42, totalPrice: 42.1 }, 'a restored row counts again')

  const filtered = await owner.ids('billing/bills', { $filter: 'itemsPrice gt 10' })
  t.same(filtered, [bill], '$filter on a derived field')
  const ordered = await owner.get('billing/bills', { $orderby: 'totalPrice desc', $top: 1 })
  t.equal(ordered.json[0].id, bill, '$orderby on a derived field')
  t.same(await owner.ids(`billing/bills/${bill}/items`, { $filter: 'price eq 41' }), [item1], '$filter on BillItem.price (4 × 10.25)')
  const summary = await owner.get('billing/billitems/summary', { summary: 'sum(price)', $filter: `bill/id eq '${bill}'` })
  t.match(summary.json, [{ key: '*', summaries: [{ name: 'sum(price)', value: '42' }] }], 'summaries read derived fields')

  await owner.del(`billing/bills/${bill}`)
  t.equal((await owner.get(`billing/billitems/${item2}`)).status, 404, 'items go to the trash with their bill')
})

t.test('impulse $watchnotify, several stopwatches, $stop with calculate_price', async (t) => {
  const project = await owner.create('time/projects', { name: 'Timed' })
  const task = await owner.create('time/tasks', { name: 'timed task', project: ref(project) })
  const start = Date.now() - 90_000
  const running = await bert.api.create('time/impulses', {
    mode: 'STOPWATCH',
    start: `/Date(${start})/`,
    project: ref(project),
    task: ref(task),
    description: 'focused',
    billable: true,
  })
  const second = await bert.api.create('time/impulses', { mode: 'STOPWATCH', start: `/Date(${start})/`, billable: true })
  t.ok(second, 'a user may run several stopwatches')

  const notified = await bert.api.get(`time/impulses/${running}/$watchnotify`)
  t.equal(notified.status, 200, notified.text)
  t.match(notified.json, { id: running, version: 2 })
  t.match(notified.json.watchLast, /^\/Date\(\d+\)\/$/)

  await owner.create('billing/pricelists/time', { price: 60, user: ref(bert.id) })
  const priced = await bert.api.post(`time/impulses/${second}/$stop`, undefined, { calculate_price: true })
  t.equal(priced.status, 200, priced.text)
  t.match(priced.json, { unitPrice: 60, price: Number }, 'calculate_price applies to the record $stop makes')
})

t.test('impulse $stop', async (t) => {
  const project = await owner.create('time/projects', { name: 'Stopped' })
  const start = Date.now() - 60_000
  const impulse = await bert.api.create('time/impulses', { mode: 'STOPWATCH', start: `/Date(${start})/`, project: ref(project), description: 'work', billable: true })
  const stopped = await bert.api.post(`time/impulses/${impulse}/$stop`)
  t.equal(stopped.status, 200, stopped.text)
  t.match(stopped.json, { user: { id: bert.id }, project: { id: project }, description: 'work', billable: true, start: `/Date(${start})/` })
  const stop = Number(/\d+/.exec(stopped.json.stop)?.[0])
  t.equal(stopped.json.duration, stop - start, 'duration = stop − start')
  t.ok(stop >= start + 60_000)
  t.equal((await bert.api.get(`time/impulses/${impulse}`)).status, 404, 'the impulse is gone')
  t.equal((await bert.api.get(`time/impulses/${impulse}/@deleted`)).status, 404, 'for good, not in the trash')
  t.same(await bert.api.ids(`time/projects/${project}/timerecords`), [stopped.json.id])

  const paused = await bert.api.create('time/impulses', { mode: 'PAUSE', start: `/Date(${start})/` })
  const notRunning = await bert.api.get(`time/impulses/${paused}/$stop`)
  t.equal(notRunning.status, 412)
  t.equal(notRunning.json.code, 'TL01-1106')
  const finished = await bert.api.create('time/impulses', { mode: 'STOPWATCH', start: `/Date(${start})/`, stop: `/Date(${start + 1000})/` })
  t.equal((await bert.api.get(`time/impulses/${finished}/$stop`)).json.code, 'TL01-1106', 'a stopped stopwatch is not running')
  const unstarted = await bert.api.create('time/impulses', { mode: 'STOPWATCH' })
  t.equal((await bert.api.get(`time/impulses/${unstarted}/$stop`)).status, 200, 'a stopwatch written without a start started then (impulseStart.test.ts)')
  t.ok(await bert.api.get(`time/impulses/${paused}`), 'a refused $stop changes nothing')

  const others = await owner.create('time/impulses', { mode: 'STOPWATCH', start: `/Date(${start})/` })
  t.equal((await bert.api.get(`time/impulses/${others}/$stop`)).status, 403, "a plain user cannot stop another user's impulse")
  t.equal((await bert.api.put(`time/impulses/${others}/$stop`, {})).status, 404, 'only GET and POST')
  t.equal((await owner.get(`time/impulses/${others}/$stop`)).status, 200)
  t.equal((await owner.get(`time/impulses/00000000-0000-4000-8000-000000000000/$stop`)).status, 404)
})

t.test('project $activate and $deactivate', async (t) => {
  const project = await owner.create('time/projects', { name: 'Switch' })
  const off = await owner.post(`time/projects/${project}/$deactivate`)
  t.equal(off.status, 200, off.text)
  t.match(off.json, { id: project, active: false, version: 2 })
  const on = await owner.get(`projects/${project}/$activate`)
  t.match(on.json, { active: true, version: 3 })
  t.equal((await bert.api.get(`time/projects/${project}/$deactivate`)).status, 403, "a plain user cannot switch the owner's project")
  const bertsOwn = await bert.api.create('time/projects', { name: 'mine' })
  t.match((await bert.api.get(`time/projects/${bertsOwn}/$deactivate`)).json, { active: false })
})
