/*
 * The change feed over real connections (a `ws` WebSocket and an
 * EventSource): every kind of change with its object, the options
 * (resources, $filter, fields=stub, no_expand), refusals before the stream
 * starts, visibility (a personal project's records never reach another
 * user), the end of a stream when its caller logs out or is deactivated,
 * ordering and completeness
 * under 8 concurrent writers, resume with `since` (no gap, no duplicate),
 * and a slow consumer disconnected (4409) without slowing the writes.
 */
import t from 'tap'
import { api, newUser, ref } from '../helpers/api.js'
import { openEventSourceFeed, openWebSocketFeed, type FeedEvent } from '../helpers/changeFeed.js'
import { startInProcess } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess(undefined, { CHANGE_FEED_MAX_BUFFERED_BYTES: String(256 * 1024) })
t.teardown(() => server.stop())
const { port } = server.client
const owner = await server.client.createTenant('feed')
const a = api(server.client, 'feed', owner.token)
const bob = await newUser(server.client, 'feed', a, 'Bob')

const kinds = (events: readonly FeedEvent[]) => events.map((event) => `${event.kind} ${event.type}`)

t.test('each kind of change reaches a WebSocket and an event stream, with its object', async (t) => {
  const ws = await openWebSocketFeed(port, 'feed', owner.token, { resources: 'time/clients' })
  const sse = await openEventSourceFeed(port, 'feed', owner.token, { resources: 'time/clients' })
  const id = await a.create('time/clients', { name: 'Initech' })
  const read = (await a.get(`time/clients/${id}`)).json
  t.equal((await a.put(`time/clients/${id}`, { ...read, name: 'Initech AG' })).status, 200)
  const trashed = await a.del(`time/clients/${id}`)
  t.equal(trashed.status, 200)
  t.equal((await a.get(`trash/${trashed.json.trashItem.id as string}/$restore`)).status, 200)
  t.equal((await a.del(`time/clients/${id}`, { hard: true })).status, 200)
  for (const feed of [ws, sse]) {
    const events = await feed.waitFor(5)
    t.same(kinds(events), ['created Client', 'updated Client', 'deleted Client', 'restored Client', 'removed Client'])
    t.ok(events.every((event) => event.id === id && event.resource === 'time/clients'))
    t.same((events[0] as FeedEvent).object, read, 'the created object as GET renders it')
    t.equal((events[1] as FeedEvent).object?.name, 'Initech AG')
    t.same(
      events.map((event) => event.version),
      [1, 2, 2, 2, null],
    )
    t.equal((events[4] as FeedEvent).object, null, 'a removed object has no body')
    const seqs = events.map((event) => event.seq)
    t.same(
      seqs,
      [...seqs].sort((x, y) => x - y),
      'in log order',
    )
    t.match((events[0] as FeedEvent).at, /^\/Date\(\d+\)\/$/)
    feed.close()
  }
})

t.test('options: resources, $filter, fields=stub', async (t) => {
  const filtered = await openWebSocketFeed(port, 'feed', owner.token, { resources: 'time/projects', $filter: "startswith(name, 'Keep')" })
  const stubs = await openWebSocketFeed(port, 'feed', owner.token, { resources: 'time/projects,time/tags', fields: 'stub' })
  await a.create('time/clients', { name: 'Not a project' })
  const kept = await a.create('time/projects', { name: 'Keep me' })
  await a.create('time/projects', { name: 'Drop me' })
  await a.create('time/tags', { name: 'Tagged', color: '#112233' })
  const [only] = await filtered.waitFor(1)
  t.equal(only?.id, kept)
  const stubEvents = await stubs.waitFor(3)
  t.same(kinds(stubEvents), ['created Project', 'created Project', 'created Tag'])
  t.notOk('billable' in (stubEvents[0]?.object ?? {}), 'a stub, not the whole project')
  t.equal(stubEvents[0]?.object?.id, kept)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(filtered.events.length, 1, 'nothing else passed the filter')
  filtered.close()
  stubs.close()
})

t.test('no_expand gives references as stubs, as on GET', async (t) => {
  const expanded = await openWebSocketFeed(port, 'feed', owner.token, { resources: 'time/tasks' })
  const stubbed = await openWebSocketFeed(port, 'feed', owner.token, { resources: 'time/tasks', no_expand: 'true' })
  const project = await a.create('time/projects', { name: 'Referenced' })
  const task = await a.create('time/tasks', { name: 'A task', project: ref(project) })
  const [full] = await expanded.waitFor(1)
  const [stub] = await stubbed.waitFor(1)
  t.same(full?.object, (await a.get(`time/tasks/${task}`)).json, 'as GET renders it')
  t.same(stub?.object, (await a.get(`time/tasks/${task}`, { no_expand: true })).json, 'as GET with no_expand renders it')
  t.ok('billable' in ((full?.object?.project ?? {}) as object), 'the project embedded')
  t.notOk('billable' in ((stub?.object?.project ?? {}) as object), 'the project as a stub')
  expanded.close()
  stubbed.close()
})

t.test('refused before the stream starts, as an error answer', async (t) => {
  const refused = async (query: Record<string, string>, token = owner.token) => {
    const error = await openWebSocketFeed(port, 'feed', token, query).then(
      (feed) => {
        feed.close()
        return null
      },
      (failure: unknown) => failure as { status: number; body: string },
    )
    return { status: error?.status, code: error === null ? undefined : (JSON.parse(error.body) as { code: string }).code }
  }
  t.same(await refused({ resources: 'time/nothing' }), { status: 400, code: 'TL01-1105' })
  t.same(await refused({ $filter: "name eq 'x'" }), { status: 400, code: 'TL01-1105' }, 'a filter needs resources')
  t.same(await refused({ resources: 'time/projects', $filter: 'nosuchfield eq 1' }), { status: 400, code: 'TL01-1105' })
  t.same(await refused({ since: 'yesterday' }), { status: 400, code: 'TL01-1105' })
  t.same(await refused({ since: '999999999' }), { status: 400, code: 'TL01-1105' }, 'since ahead of the log')
  t.same(await refused({ fields: 'everything' }), { status: 400, code: 'TL01-1105' })
  t.same(await refused({}, 'not-a-token'), { status: 401, code: 'TL01-1010' })
  const plain = await a.get('changes')
  t.equal(plain.status, 406, 'neither a WebSocket nor an event stream')
  t.equal(plain.json.code, 'TL01-9007')
})

t.test("a personal project's records never reach another user", async (t) => {
  const bobFeed = await openWebSocketFeed(port, 'feed', bob.api.token, { resources: 'time/projects,time/timerecords' })
  const ownerFeed = await openWebSocketFeed(port, 'feed', owner.token, { resources: 'time/projects,time/timerecords' })
  const me = (await a.get('users/@self')).json.id as string
  const personal = await a.create('time/projects', { name: 'Owner only', personal: true })
  const hidden = await a.create('time/timerecords', { user: ref(me), project: ref(personal), duration: 60_000, start: '2024-06-10T09:00:00Z' })
  const shared = await a.create('time/projects', { name: 'Everyone' })
  const [bobSees] = await bobFeed.waitFor(1)
  t.equal(bobSees?.id, shared, 'bob gets the shared project only')
  await ownerFeed.waitFor(3)
  t.same(
    ownerFeed.events.map((event) => event.id),
    [personal, hidden, shared],
  )
  t.notOk(bobFeed.events.some((event) => event.id === personal || event.id === hidden))
  bobFeed.close()
  ownerFeed.close()
})

t.test('logging out ends the stream with 4401', async (t) => {
  const token = await server.client.login('feed', owner.email, owner.password)
  const ws = await openWebSocketFeed(port, 'feed', token)
  const sse = await openEventSourceFeed(port, 'feed', token)
  t.equal((await api(server.client, 'feed', token).get('auth/logout')).status, 200)
  t.equal((await ws.closed).code, 4401)
  t.equal((await sse.closed).code, 4401)
})

t.test('deactivating the user ends the stream with 4401', async (t) => {
  const carol = await newUser(server.client, 'feed', a, 'Carol')
  const feed = await openWebSocketFeed(port, 'feed', carol.api.token)
  const user = (await a.get(`users/${carol.id}`)).json
  t.equal((await a.put(`users/${carol.id}`, { ...user, active: false })).status, 200)
  t.equal((await feed.closed).code, 4401)
})

t.test('8 concurrent writers: every event once, in log order; a resume from any point has no gap and no duplicate', async (t) => {
  const before = (await a.post('time/tags', { name: 'marker', color: '#000000' })).json.id as string
  const feed = await openWebSocketFeed(port, 'feed', owner.token, { resources: 'time/tags' })
  const writers = 8
  const each = 25
  const created = await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      const ids: string[] = []
      for (let n = 0; n < each; n += 1) ids.push(await a.create('time/tags', { name: `w${writer}-${n}`, color: '#000000' }))
      return ids
    }),
  )
  const events = await feed.waitFor(writers * each)
  t.same(new Set(events.map((event) => event.id)), new Set(created.flat()), 'every write is an event')
  t.equal(events.length, writers * each, 'none twice')
  const positions = events.map((event) => event.seq * 1000 + event.op)
  t.same(
    positions,
    [...positions].sort((x, y) => x - y),
    'in log order',
  )
  t.notOk(events.some((event) => event.id === before))
  // Resume after a random event: the rest, exactly.
  const cut = Math.floor(Math.random() * (events.length - 1))
  const last = events[cut] as FeedEvent
  const resumed = await openWebSocketFeed(port, 'feed', owner.token, { resources: 'time/tags', since: `${last.seq}.${last.op}` })
  const expected = events.slice(cut + 1).map((event) => event.id)
  const rest = await resumed.waitFor(expected.length)
  t.same(
    rest.map((event) => event.id),
    expected,
    'no gap, no duplicate',
  )
  // …and it goes on live.
  const after = await a.create('time/tags', { name: 'after', color: '#000000' })
  await resumed.waitFor(expected.length + 1)
  t.equal(resumed.events.at(-1)?.id, after)
  feed.close()
  resumed.close()
})

t.test('a slow consumer is disconnected with 4409 and does not slow the writes', async (t) => {
  const slow = await openWebSocketFeed(port, 'feed', owner.token, { resources: 'time/projects' }, { paused: true })
  const fast = await openWebSocketFeed(port, 'feed', owner.token, { resources: 'time/projects' })
  // 60 kB each, 15 MB in all: far more than the socket buffers of the loopback take while the slow client reads nothing.
  const note = 'x'.repeat(60_000)
  const started = performance.now()
  const count = 250
  for (let n = 0; n < count; n += 1) await a.create('time/projects', { name: `slow ${n}`, note })
  const elapsedMs = performance.now() - started
  slow.socket.resume()
  const end = await slow.closed
  t.equal(end.code, 4409, end.reason)
  t.ok(slow.events.length < count, `the slow one got ${slow.events.length} before it was cut`)
  await fast.waitFor(count)
  t.equal(fast.events.length, count, 'the other subscriber got every event')
  t.ok(elapsedMs < 60_000, `the writes went on (${elapsedMs.toFixed(0)} ms for ${count})`)
  // It resumes after its last event.
  const last = slow.events.at(-1) as FeedEvent
  const resumed = await openWebSocketFeed(port, 'feed', owner.token, { resources: 'time/projects', since: `${last.seq}.${last.op}` })
  await resumed.waitFor(count - slow.events.length)
  t.same(
    [...slow.events, ...resumed.events].map((event) => event.id),
    fast.events.map((event) => event.id),
  )
  fast.close()
  resumed.close()
})
