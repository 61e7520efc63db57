/*
 * A list answer renders each referenced object once and hands it to every
 * row that embeds it (src/domain/render.ts, renderList). Whatever is shared,
 * each row must read exactly as the same record read alone: embedded objects
 * expanded, stubs with no_expand, in JSON and in XML, and a change of a
 * referenced object shows in the next answer. A JSON list keeps the JSON
 * of referenced objects across answers while the state is unchanged
 * (domain/renderedJson.ts), so the last tests change what an embedded object
 * shows without changing its own record (its client's name), and change
 * state inside a batch group that is then rolled back.
 */
import t from 'tap'
import { api, newUser, ref } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = api(client, 'render', (await client.createTenant('render')).token)
const ownerId = (await owner.get('users/@self')).json.id as string
const bert = await newUser(client, 'render', owner, 'Bert')

const clientId = await owner.create('time/clients', { name: 'Globex' })
const projectId = await owner.create('time/projects', { name: 'Apollo', client: ref(clientId) })
const taskId = await owner.create('time/tasks', { name: 'Design', project: ref(projectId) })
const recordIds: string[] = []
for (let index = 0; index < 6; index += 1) {
  const user = index % 2 === 0 ? ownerId : bert.id
  recordIds.push(await owner.create('time/timerecords', { user: ref(user), project: ref(projectId), task: ref(taskId), duration: 60_000 * (index + 1), description: `r${index}` }))
}

for (const noExpand of [false, true]) {
  t.test(`every row of a list equals the record read alone (no_expand=${noExpand})`, async (t) => {
    const query = { $filter: `project/id eq '${projectId}'`, $orderby: 'duration', no_expand: noExpand }
    const listed = await owner.get('time/timerecords', query)
    t.equal(listed.status, 200)
    const rows = listed.json as Record<string, unknown>[]
    t.equal(rows.length, recordIds.length)
    for (const row of rows) {
      const alone = await owner.get(`time/timerecords/${row.id as string}`, { no_expand: noExpand })
      t.same(row, alone.json, `row ${row.description as string}`)
    }
    const projects = rows.map((row) => row.project as Record<string, unknown>)
    t.ok(projects.every((project) => project.id === projectId && project.displayName === 'Apollo'))
    if (noExpand) t.notOk('client' in (projects[0] ?? {}), 'a stub carries no references')
    else t.same(Object.keys(projects[0]?.client as object).sort(), ['displayName', 'id', 'name', 'version'], 'an embedded object has its references as stubs')
  })
}

t.test('the XML list repeats the shared embedded objects in every row', async (t) => {
  const listed = await owner.get('time/timerecords', { $filter: `project/id eq '${projectId}'`, format: 'xml' })
  t.equal(listed.status, 200)
  const rows = listed.text.split('<timeRecord>').slice(1)
  t.equal(rows.length, recordIds.length, 'one element per record')
  t.ok(
    rows.every((row) => row.includes(`<project><id>${projectId}</id>`) && row.includes('<name>Apollo</name>')),
    'each row embeds the project whole',
  )
})

t.test('a list read three times is the same; a changed row shows in the next list', async (t) => {
  const query = { $filter: `project/id eq '${projectId}'`, $orderby: 'duration' }
  const first = await owner.get('time/timerecords', query)
  // Rows are kept from their second rendering on (renderedJson.ts): the third read is written from kept text.
  for (const read of ['second', 'third']) t.equal((await owner.get('time/timerecords', query)).text, first.text, `the ${read} read is the same text`)
  const row = (first.json as { id: string; version: number }[])[0] as { id: string; version: number }
  t.equal((await owner.put(`time/timerecords/${row.id}`, { description: 'changed', version: row.version })).status, 200)
  const again = (await owner.get('time/timerecords', query)).json as { id: string; description: string }[]
  t.equal(again.find((candidate) => candidate.id === row.id)?.description, 'changed')
})

t.test('a change of a referenced object shows in the next list', async (t) => {
  const project = (await owner.get(`time/projects/${projectId}`)).json
  t.equal((await owner.put(`time/projects/${projectId}`, { name: 'Artemis', version: project.version })).status, 200)
  const rows = (await owner.get('time/timerecords', { $filter: `project/id eq '${projectId}'` })).json as { project: { name: string } }[]
  t.ok(rows.length > 0 && rows.every((row) => row.project.name === 'Artemis'))
})

/** The client name every row's embedded project shows (expanded), and every stub's display name with no_expand. */
async function shownClientNames(): Promise<{ embedded: string[]; projectStubs: string[] }> {
  const query = { $filter: `project/id eq '${projectId}'` }
  const expanded = (await owner.get('time/timerecords', query)).json as { project: { client: { name: string } } }[]
  const stubs = (await owner.get('time/timerecords', { ...query, no_expand: true })).json as { project: { displayName: string } }[]
  return { embedded: [...new Set(expanded.map((row) => row.project.client.name))], projectStubs: [...new Set(stubs.map((row) => row.project.displayName))] }
}

t.test('a change that an embedded object shows, though its own record is unchanged, shows in the next list', async (t) => {
  t.same((await shownClientNames()).embedded, ['Globex'], 'read once: the embedded project is kept')
  const globex = (await owner.get(`time/clients/${clientId}`)).json
  t.equal((await owner.put(`time/clients/${clientId}`, { name: 'Initech', version: globex.version })).status, 200)
  t.same((await shownClientNames()).embedded, ['Initech'], "the project's client stub shows the new name")
})

t.test('a record read alone again is its kept row: the same text each time, and a change it shows appears at once', async (t) => {
  const recordId = recordIds[0] as string
  for (const noExpand of [false, true]) {
    const first = await owner.get(`time/timerecords/${recordId}`, { no_expand: noExpand })
    // The second reading keeps the row's text (renderedJson.ts); the third is written from it.
    for (const read of ['second', 'third'])
      t.equal((await owner.get(`time/timerecords/${recordId}`, { no_expand: noExpand })).text, first.text, `no_expand=${noExpand}: the ${read} read is the same text`)
    const listed = (await owner.get('time/timerecords', { $filter: `id eq '${recordId}'`, no_expand: noExpand })).text
    t.equal(listed, `[${first.text}]`, `no_expand=${noExpand}: the list shows the kept row as it is`)
  }
  const nameShown = async () => {
    const read = (await owner.get(`time/timerecords/${recordId}`)).json as { project: { client: { name: string } } }
    return read.project.client.name
  }
  const before = await nameShown()
  const current = (await owner.get(`time/clients/${clientId}`)).json
  t.equal((await owner.put(`time/clients/${clientId}`, { name: `${before} Ltd`, version: current.version })).status, 200)
  t.equal(await nameShown(), `${before} Ltd`, "the record's embedded project shows its client's new name")
  t.equal((await owner.get(`time/timerecords/${recordId}`, { format: 'xml' })).text.includes(`<name>${before} Ltd</name>`), true, 'and so does XML')
  // With counters (they depend on the viewer, so the rendering is not kept), read once after a list embedded the client.
  for (let read = 0; read < 3; read += 1) {
    const counted = await owner.get(`time/projects/${projectId}`, { append: 'timerecords-count' })
    t.equal(counted.status, 200, `a project read with append counters (read ${read + 1})`)
    t.equal(counted.json.timeRecordsCount, recordIds.length)
    t.equal(counted.json.client.name, `${before} Ltd`)
  }
  const renamed = (await owner.get(`time/clients/${clientId}`)).json
  t.equal((await owner.put(`time/clients/${clientId}`, { name: before, version: renamed.version })).status, 200, 'the name as before, for the tests below')
  t.equal(await nameShown(), before)
})

const listPath = `/v1/time/timerecords?$filter=${encodeURIComponent(`project/id eq '${projectId}'`)}`

async function batch(items: unknown[]): Promise<{ id: string; code: number; body: string }[]> {
  const answer = await client.request('POST', '/v1/batch', { tenant: 'render', query: { token: owner.token }, body: items })
  if (answer.status !== 200) throw new Error(`batch answered ${answer.status}`)
  return answer.json as { id: string; code: number; body: string }[]
}

async function renameClient(name: string, transaction: string): Promise<unknown> {
  const current = (await owner.get(`time/clients/${clientId}`)).json
  return { id: 'rename', method: 'PUT', path: `/v1/time/clients/${clientId}`, body: JSON.stringify({ name, version: current.version }), transaction }
}

t.test("a list inside a batch group sees the group's earlier change before it is logged", async (t) => {
  t.same((await shownClientNames()).embedded, ['Initech'], 'read before the batch')
  const items = await batch([await renameClient('Hooli', 'T'), { id: 'list', method: 'GET', path: listPath, transaction: 'T' }])
  t.same(
    items.map((item) => item.code),
    [200, 200],
  )
  const inside = JSON.parse(items[1]?.body ?? '[]') as { project: { client: { name: string } } }[]
  t.ok(inside.length > 0 && inside.every((row) => row.project.client.name === 'Hooli'), 'the list in the group shows the rename')
  t.same((await shownClientNames()).embedded, ['Hooli'], 'and so does the next list')
})

t.test('a batch group that is rolled back leaves the lists as before it', async (t) => {
  const before = await shownClientNames()
  const items = await batch([
    await renameClient('Umbrella', 'T'),
    { id: 'list', method: 'GET', path: listPath, transaction: 'T' },
    { id: 'fail', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'x', client: { id: '00000000-0000-4000-8000-000000000000' } }), transaction: 'T' },
  ])
  t.same(
    items.map((item) => item.code),
    [424, 424, 412],
    'the group failed on its last item, after the list was read in it',
  )
  t.same(await shownClientNames(), before, 'after the rollback the lists show the state before the batch')
})

t.test('a list longer than the cache keeps (1 MiB of text) reads the same each time and as its records alone', async (t) => {
  const note = 'n'.repeat(16_000)
  for (let index = 0; index < 80; index += 1) await owner.create('time/projects', { name: `big-${String(index).padStart(2, '0')}`, note, client: ref(clientId) })
  const query = { $filter: "startswith(name, 'big-')", $orderby: 'name', $top: 1000 }
  const first = await owner.get('time/projects', query)
  t.equal((first.json as unknown[]).length, 80)
  t.ok(first.text.length > 1024 * 1024, `the answer is ${first.text.length} characters`)
  for (const read of ['second', 'third']) t.equal((await owner.get('time/projects', query)).text, first.text, `the ${read} read is the same text`)
  const rows = first.json as { id: string }[]
  for (const row of [rows[0], rows[40], rows[79]]) t.same(row, (await owner.get(`time/projects/${row?.id ?? ''}`)).json, 'a row reads as its record alone')
})
