/*
 * The views the original lists beyond interface.md's, over
 * HTTP: `@editable` projects and tasks are what the caller may change (the
 * write rule itself), `@trackable` tasks are open tasks of trackable
 * projects, `@linked` work types have a live link to a live project; and
 * the project views, summaries of views and `$activate`/`$deactivate`
 * inside `users/{id}/projects` and `time/clients/{id}/projects` hold only
 * that parent's projects.
 */
import t from 'tap'
import { api, newUser, ref, sorted } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = api(client, 'views26', (await client.createTenant('views26')).token)
const ada = await newUser(client, 'views26', owner, 'Ada')
const ben = await newUser(client, 'views26', owner, 'Ben')
const pam = await newUser(client, 'views26', owner, 'Pam', { projectManager: true })

t.test('@editable projects and tasks: what the caller may change', async (t) => {
  const adaOwn = await ada.api.create('time/projects', { name: 'ada own' })
  const benOwn = await ben.api.create('time/projects', { name: 'ben own' })
  const benPersonal = await ben.api.create('time/projects', { name: 'ben personal', personal: true })
  const ownersProject = await owner.create('time/projects', { name: 'owner project' })
  t.same(await ada.api.ids('time/projects/@editable'), [adaOwn], 'a user edits the projects they own')
  t.same(await ben.api.ids('time/projects/@editable'), sorted([benOwn, benPersonal]))
  const pamEditable = await pam.api.ids('time/projects/@editable')
  for (const id of [adaOwn, benOwn, ownersProject]) t.ok(pamEditable.includes(id), 'a project manager edits every project')
  t.notOk(pamEditable.includes(benPersonal), "another user's personal project is not even visible")
  const ownerEditable = await owner.ids('time/projects/@editable')
  t.ok(
    [adaOwn, benOwn, ownersProject].every((id) => ownerEditable.includes(id)),
    'the owner edits everything visible',
  )
  // The view agrees with the write check.
  t.equal((await ada.api.put(`time/projects/${benOwn}`, { note: 'x' }, { version_ignore: true })).status, 403, 'not editable: the write is refused')
  t.equal((await ada.api.put(`time/projects/${adaOwn}`, { note: 'x' }, { version_ignore: true })).status, 200, 'editable: the write passes')

  const adaTask = await ada.api.create(`time/projects/${adaOwn}/tasks`, { name: 'ada task' })
  const benTask = await ben.api.create(`time/projects/${benOwn}/tasks`, { name: 'ben task' })
  const adaEditableTasks = await ada.api.ids('time/tasks/@editable')
  t.ok(adaEditableTasks.includes(adaTask) && !adaEditableTasks.includes(benTask), "tasks of the caller's projects")
  t.same(await ada.api.ids(`time/projects/${adaOwn}/tasks/@editable`), [adaTask], 'the view inside an inner collection')
  t.same(await ada.api.ids(`time/projects/${benOwn}/tasks/@editable`), [], "none of ben's project")
  t.ok((await pam.api.ids('time/tasks/@editable')).includes(benTask), 'a project manager edits every task')
  t.same(await ada.api.ids('time/projects/@editable', { $filter: "name eq 'nothing'" }), [], 'views take $filter')
})

t.test('@trackable tasks: open, effective, of a trackable project', async (t) => {
  const live = await owner.create('time/projects', { name: 'live' })
  const inactive = await owner.create('time/projects', { name: 'inactive', active: false })
  const trashed = await owner.create('time/projects', { name: 'trashed' })
  const open = await owner.create(`time/projects/${live}/tasks`, { name: 'open' })
  const noProject = await owner.create('time/tasks', { name: 'no project' })
  const done = await owner.create(`time/projects/${live}/tasks`, { name: 'done', done: true })
  const ineffective = await owner.create(`time/projects/${live}/tasks`, { name: 'ineffective', effective: false })
  const ofInactive = await owner.create(`time/projects/${inactive}/tasks`, { name: 'of inactive' })
  await owner.create(`time/projects/${trashed}/tasks`, { name: 'of trashed' })
  await owner.del(`time/projects/${trashed}`)
  const trackable = await owner.ids('time/tasks/@trackable')
  t.ok(trackable.includes(open) && trackable.includes(noProject))
  for (const id of [done, ineffective, ofInactive]) t.notOk(trackable.includes(id), `not trackable: ${id}`)
  t.same(await owner.ids(`time/projects/${live}/tasks/@trackable`), [open], 'inside the project')
  t.equal((await owner.get(`time/projects/${live}/tasks/@trackable/$count`)).text, '1', 'a view counted')
})

t.test('@linked work types', async (t) => {
  const project = await owner.create('time/projects', { name: 'linking' })
  const gone = await owner.create('time/projects', { name: 'gone' })
  const personal = await ada.api.create('time/projects', { name: 'ada personal', personal: true })
  const [coding, design, unlinked, viaTrashedLink, viaTrashedProject, viaPersonal] = await Promise.all(
    ['Coding', 'Design', 'Unlinked', 'Trashed link', 'Trashed project', 'Personal'].map((name) => owner.create('time/worktypes', { name })),
  )
  await owner.create(`time/projects/${project}/worktypelinks`, { workType: ref(coding as string) })
  await owner.create(`time/projects/${project}/worktypelinks`, { workType: ref(design as string) })
  const trashedLink = await owner.create(`time/projects/${project}/worktypelinks`, { workType: ref(viaTrashedLink as string) })
  await owner.del(`time/projectworktypelinks/${trashedLink}`)
  await owner.create(`time/projects/${gone}/worktypelinks`, { workType: ref(viaTrashedProject as string) })
  await owner.del(`time/projects/${gone}`)
  await ada.api.create(`time/projects/${personal}/worktypelinks`, { workType: ref(viaPersonal as string) })
  t.same(await owner.ids('time/worktypes/@linked'), sorted([coding as string, design as string]), 'live links of live, visible projects')
  t.same(await ada.api.ids('time/worktypes/@linked'), sorted([coding as string, design as string, viaPersonal as string]), 'the owner of a personal project sees its links')
  t.notOk((await owner.ids('time/worktypes/@linked')).includes(unlinked as string))
})

t.test('project views and $activate/$deactivate inside users/{id}/projects and time/clients/{id}/projects', async (t) => {
  const client1 = await owner.create('time/clients', { name: 'Client 1' })
  const client2 = await owner.create('time/clients', { name: 'Client 2' })
  const benFor1 = await ben.api.create('time/projects', { name: 'ben for 1', client: ref(client1) })
  const benFor2 = await ben.api.create('time/projects', { name: 'ben for 2', client: ref(client2) })
  const adaFor1 = await ada.api.create('time/projects', { name: 'ada for 1', client: ref(client1) })
  const inactiveFor1 = await owner.create(`time/clients/${client1}/projects`, { name: 'inactive for 1', active: false })
  await owner.create(`time/projects/${adaFor1}/members`, { user: ref(ben.id) })
  await owner.create(`time/projects/${benFor2}/members`, { user: ref(ben.id) })

  t.same(await ben.api.ids(`users/${ben.id}/projects/@own`), sorted(await ben.api.ids('time/projects/@own')), "users/{id}/projects/@own: ben's own")
  t.same(await ben.api.ids(`users/${ada.id}/projects/@own`), [], "ada's projects are not ben's own")
  t.ok((await ben.api.ids(`users/${ben.id}/projects/@editable`)).includes(benFor1))
  t.same(await ben.api.ids(`users/${ada.id}/projects/@editable`), [], "ben may change none of ada's")
  t.same(await ben.api.ids(`users/${ada.id}/projects/@member`), [adaFor1], "ada's projects ben is a member of")
  const summary = await ben.api.get(`users/${ben.id}/projects/@member/summary`, { summary: 'count()' })
  t.equal(summary.status, 200, summary.text)
  t.same(summary.json, [{ key: '*', summaries: [{ name: 'count()', value: '1' }] }], 'a view summed up inside an inner collection')

  t.same(await owner.ids(`time/clients/${client1}/projects/@trackable`), sorted([benFor1, adaFor1]), 'trackable projects of client 1')
  t.same(await ben.api.ids(`time/clients/${client1}/projects/@own`), [benFor1])
  t.same(await ben.api.ids(`time/clients/${client1}/projects/@member`), [adaFor1])
  t.same(await ben.api.ids(`time/clients/${client1}/projects/@editable`), [benFor1])
  t.same(await owner.ids(`time/clients/${client1}/projects/@deleted`), [], 'the trash of an inner collection')

  const activated = await owner.call('PUT', `time/clients/${client1}/projects/${inactiveFor1}/$activate`)
  t.equal(activated.status, 200, activated.text)
  t.equal(activated.json.active, true)
  const deactivated = await ben.api.post(`users/${ben.id}/projects/${benFor1}/$deactivate`)
  t.equal(deactivated.status, 200, deactivated.text)
  t.equal(deactivated.json.active, false)
  t.equal((await owner.get(`time/projects/${benFor1}`)).json.active, false, 'stored')
  const elsewhere = await owner.call('PUT', `time/clients/${client2}/projects/${benFor1}/$activate`)
  t.equal(elsewhere.status, 404, "a project of another client is not found in this client's projects")
  t.equal(elsewhere.json.code, 'TL01-1101')
  t.equal((await owner.get(`time/projects/${benFor1}`)).json.active, false, 'and nothing changed')
  t.equal((await ada.api.post(`users/${ben.id}/projects/${benFor1}/$activate`)).status, 403, "$activate keeps the write rule: ada may not change ben's project")
  t.equal((await owner.get(`users/${ada.id}/projects/${benFor1}`)).status, 404, "reading ben's project under ada's projects: not found")
  t.equal((await owner.get(`users/${ben.id}/projects/${benFor1}`)).json.id, benFor1, 'under its owner it is found')
  t.equal((await owner.get(`time/clients/${client1}/projects/@nothing`)).json.code, 'TL01-9003', 'an unknown view of an inner collection')
})
