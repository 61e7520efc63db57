/*
 * The history of an object (GET /v1/<resource>/{id}/$history) and of the
 * tenant (GET /v1/activity): each change the log holds, newest first, with
 * who made it, its kind and an update's changed fields old and new; only
 * to those a GET shows the object (the tenant's: owner and admins); hidden
 * fields never appear; paged with `before`; `$filter` and `format=csv` on
 * the tenant's; and from when the log holds history.
 */
import t from 'tap'
import { api, newUser, type Api } from '../helpers/api.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'
import { activeActor, startInProcess } from '../helpers/server.js'

inClusterParitySuite()

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const signedUp = await client.createTenant('hist')
const owner = api(client, 'hist', signedUp.token)
const ownerId = (await owner.get('users/@self')).json.id as string
const worker = await newUser(client, 'hist', owner, 'Wendy')

interface Item {
  seq: number
  at: string
  user: { id: string; displayName?: string } | null
  userKnown: boolean
  kind: string
  resource: string
  type: string
  id: string
  version: number | null
  changes: { field: string; old: unknown; new: unknown }[] | null
}

interface Page {
  availableFrom: { seq: number; at: string } | null
  items: Item[]
  next: string | null
}

const pageOf = (json: unknown) => json as Page

/** A merge patch at the object's current version. */
async function patch(as: Api, path: string, body: Record<string, unknown>): Promise<number> {
  const version = (await as.get(path)).json.version as number
  const answer = await as.call('PATCH', path, { rawBody: JSON.stringify({ ...body, version }), headers: { 'content-type': 'application/merge-patch+json' } })
  return answer.status
}

t.test('an object’s history: each kind newest first, who made it, an update’s fields old and new', async (t) => {
  const project = await owner.create('time/projects', { name: 'Relaunch' })
  t.equal(await patch(owner, `time/projects/${project}`, { name: 'Relaunch 2', note: 'the second try' }), 200)
  const trashed = await owner.del(`time/projects/${project}`)
  t.equal(trashed.status, 200)
  const trashItem = trashed.json.trashItem.id as string
  t.equal((await owner.get(`trash/${trashItem}/$restore`)).status, 200)

  const answer = await owner.get(`time/projects/${project}/$history`)
  t.equal(answer.status, 200, answer.text)
  const page = pageOf(answer.json)
  t.same(
    page.items.map((item) => item.kind),
    ['restored', 'deleted', 'updated', 'created'],
  )
  t.ok(
    page.items.every((item, at) => at === 0 || item.seq < (page.items[at - 1] as Item).seq),
    'newest first',
  )
  t.ok(
    page.items.every((item) => item.userKnown && item.user?.id === ownerId && item.user.displayName === 'Owner Olive'),
    'made by the owner, as a stub',
  )
  t.ok(page.items.every((item) => item.resource === 'time/projects' && item.type === 'Project' && item.id === project))
  const update = page.items[2] as Item
  t.same(update.changes, [
    { field: 'name', old: 'Relaunch', new: 'Relaunch 2' },
    { field: 'note', old: null, new: 'the second try' },
  ])
  t.equal(update.version, 2)
  t.equal(page.items[0]?.changes, null, 'fields are told for an update only')
  t.equal(page.next, null, 'nothing older')
  t.ok(page.availableFrom !== null && page.availableFrom.seq === 1, 'the log holds everything since the first entry')
  t.match(page.availableFrom?.at, /^\/Date\(\d+\)\/$/)

  // Removed for good: its history still answers, to those who saw it.
  const again = await owner.del(`time/projects/${project}`)
  t.equal((await owner.del(`trash/${again.json.trashItem.id as string}`)).status, 200)
  const gone = pageOf((await owner.get(`time/projects/${project}/$history`)).json)
  t.same(
    gone.items.slice(0, 2).map((item) => item.kind),
    ['removed', 'deleted'],
  )
})

t.test('who made each change: another user’s update names that user', async (t) => {
  const tag = await owner.create('time/tags', { name: 'urgent', color: '#ff0000' })
  const changed = { status: await patch(worker.api, `time/tags/${tag}`, { color: '#00ff00' }) }
  if (changed.status !== 200) {
    // A tag is the owner's to change: the owner then makes the second change too.
    t.equal(await patch(owner, `time/tags/${tag}`, { color: '#00ff00' }), 200)
  }
  const page = pageOf((await owner.get(`time/tags/${tag}/$history`)).json)
  t.same(
    page.items.map((item) => [item.kind, item.user?.id]),
    [
      ['updated', changed.status === 200 ? worker.id : ownerId],
      ['created', ownerId],
    ],
  )
  t.same(page.items[0]?.changes, [{ field: 'color', old: '#ff0000', new: '#00ff00' }])
})

t.test('fields a GET never shows never appear: a new password is an update without fields', async (t) => {
  const other = await newUser(client, 'hist', owner, 'Oscar')
  t.equal(await patch(owner, `users/${other.id}`, { password: 'another-password', lastName: 'Worker' }), 200)
  const page = pageOf((await owner.get(`users/${other.id}/$history`)).json)
  const update = page.items[0] as Item
  t.equal(update.kind, 'updated')
  t.same(
    update.changes?.map((change) => change.field),
    ['lastName'],
  )
  t.notMatch(JSON.stringify(page), /password|argon2/i, 'no password and no hash anywhere')
})

t.test('visibility as a GET: someone else’s personal project is 404, as its GET', async (t) => {
  const personal = await owner.create('time/projects', { name: 'Mine', personal: true })
  t.equal((await worker.api.get(`time/projects/${personal}`)).status, 404)
  const history = await worker.api.get(`time/projects/${personal}/$history`)
  t.equal(history.status, 404)
  t.equal(history.json.code, 'TL01-1101')
  t.equal((await owner.get(`time/projects/${personal}/$history`)).status, 200)
  t.equal((await owner.get('time/projects/00000000-0000-4000-8000-000000000000/$history')).status, 404, 'an id never seen is 404')
  t.equal((await owner.post(`time/projects/${personal}/$history`, {})).status, 405)
})

t.test('paging: $top items a page, `next` and Link go on before the last entry read', async (t) => {
  const client_ = await owner.create('clients', { name: 'Paged' })
  for (let n = 1; n <= 4; n += 1) t.equal(await patch(owner, `clients/${client_}`, { name: `Paged ${n}` }), 200)
  const first = await owner.get(`clients/${client_}/$history`, { $top: 2 })
  const page = pageOf(first.json)
  t.same(
    page.items.map((item) => item.version),
    [5, 4],
  )
  t.type(page.next, 'string')
  t.match(first.headers.link, /rel="next"/)
  t.notMatch(page.next, /token=/, 'the link carries no credential')
  const before = new URL(page.next as string, 'http://x').searchParams.get('before')
  const second = pageOf((await owner.get(`clients/${client_}/$history`, { $top: 2, before: before as string })).json)
  t.same(
    second.items.map((item) => item.version),
    [3, 2],
  )
  const third = pageOf((await owner.get(`clients/${client_}/$history`, { $top: 2, before: String(second.items[1]?.seq) })).json)
  t.same(
    third.items.map((item) => item.kind),
    ['created'],
  )
  t.equal(third.next, null)
  for (const [name, value] of [
    ['$top', '0'],
    ['$top', '1001'],
    ['$top', 'x'],
    ['before', '-1'],
    ['before', '1.5'],
  ]) {
    const bad = await owner.get(`clients/${client_}/$history`, { [name as string]: value as string })
    t.equal(bad.status, 400, `${name}=${value}`)
    t.equal(bad.json.code, 'TL01-1105')
  }
})

t.test('the tenant’s history: owner and admins, $filter on user, resource and time, CSV', async (t) => {
  const refused = await worker.api.get('activity')
  t.equal(refused.status, 403)
  t.equal(refused.json.code, 'TL01-1008')

  const all = pageOf((await owner.get('activity')).json)
  t.ok(all.items.length > 10)
  t.ok(
    all.items.every((item, at) => at === 0 || item.seq <= (all.items[at - 1] as Item).seq),
    'newest first',
  )
  t.notOk(
    all.items.some((item) => ['AuthToken', 'KeptAnswer'].includes(item.type)),
    'no internal records',
  )

  const projects = pageOf((await owner.get('activity', { $filter: `resource eq 'time/projects'` })).json)
  t.ok(projects.items.length >= 6 && projects.items.every((item) => item.resource === 'time/projects'))
  const byOwner = pageOf((await owner.get('activity', { $filter: `user eq '${ownerId}'` })).json)
  t.ok(byOwner.items.length > 5 && byOwner.items.every((item) => item.user?.id === ownerId), 'the owner’s changes only')
  const byNobody = pageOf((await owner.get('activity', { $filter: `user eq null` })).json)
  t.ok(
    byNobody.items.every((item) => item.user === null),
    'changes no signed-in user made',
  )
  const latest = all.items[0] as Item
  const since = pageOf((await owner.get('activity', { $filter: `seq ge ${latest.seq} and kind eq '${latest.kind}'` })).json)
  t.same(
    since.items.map((item) => item.seq),
    [latest.seq],
  )
  const atMs = Number(/\d+/.exec(latest.at)?.[0])
  const later = pageOf((await owner.get('activity', { $filter: `at gt datetime'${new Date(atMs + 1000).toISOString().slice(0, 19)}'` })).json)
  t.same(later.items, [], 'nothing after the last write')
  const badFilter = await owner.get('activity', { $filter: 'nosuchfield eq 1' })
  t.equal(badFilter.status, 400)

  const paged = pageOf((await owner.get('activity', { $top: 3 })).json)
  t.equal(paged.items.length, 3)
  t.type(paged.next, 'string')

  const csv = await owner.get('activity', { format: 'csv', $filter: `type eq 'Client'` })
  t.equal(csv.status, 200, csv.text)
  t.match(csv.headers['content-type'], /^text\/csv/)
  const lines = csv.text.trim().split(/\r?\n/)
  t.match(lines[0], /^seq,at,userId,user,userKnown,kind,resource,type,id,version,changes$/)
  t.equal(lines.length - 1, 5, 'the client’s five changes')
  t.match(lines[1], new RegExp(`,${ownerId},Owner Olive,true,updated,[a-z/]*clients,Client,`))
  t.match(lines[1], /""field"":""name""/, 'the changed fields as JSON text')
})

t.test('a write no signed-in user made says so: user null, known', async (t) => {
  const tag = await owner.create('time/tags', { name: 'system', color: '#000000' })
  // The node serving the tenant (in a cluster, either node may hold it).
  const actor = activeActor(server, 'hist')
  if (actor === undefined) throw new Error("no node serves tenant 'hist'")
  await actor.write((tx) => {
    const rec = tx.state.get('Tag', tag)
    if (rec !== undefined) tx.put('Tag', { ...rec, color: '#111111', version: rec.version + 1, updatedAt: tx.now })
  })
  const page = pageOf((await owner.get(`time/tags/${tag}/$history`)).json)
  t.same(
    page.items.map((item) => [item.kind, item.user?.id ?? null, item.userKnown]),
    [
      ['updated', null, true],
      ['created', ownerId, true],
    ],
  )
  t.same(page.items[0]?.changes, [{ field: 'color', old: '#000000', new: '#111111' }])
})
