/*
 * A list answer renders each referenced object once and hands it to every
 * row that embeds it (src/domain/render.ts, renderList). Whatever is shared,
 * each row must read exactly as the same record read alone: embedded objects
 * expanded, stubs with no_expand, in JSON and in XML, and a change of a
 * referenced object shows in the next answer.
 */
import t from 'tap'
import { api, newUser, ref } from './helpers/api.js'
import { startInProcess } from './helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = api(client, 'render', (await client.createTenant('render')).token)
const ownerId = (await owner.get('users/@self')).json[0].id as string
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
  t.ok(rows.every((row) => row.includes(`<project><id>${projectId}</id>`) && row.includes('<name>Apollo</name>')), 'each row embeds the project whole')
})

t.test('a change of a referenced object shows in the next list', async (t) => {
  const project = (await owner.get(`time/projects/${projectId}`)).json
  t.equal((await owner.put(`time/projects/${projectId}`, { name: 'Artemis', version: project.version })).status, 200)
  const rows = (await owner.get('time/timerecords', { $filter: `project/id eq '${projectId}'` })).json as { project: { name: string } }[]
  t.ok(rows.length > 0 && rows.every((row) => row.project.name === 'Artemis'))
})
