/*
 * Who gets which events of the change feed (issue 37, finding 8), live and
 * on a resume with `since`: a user's secret keys reach that user alone (not
 * the owner, not an admin); the records of the owner's personal project —
 * its tasks and time records, their trash items, and their `removed`
 * events when they are removed for good or their trash items go — reach
 * the owner alone; a user's private storage entry and its removal reach
 * that user alone. Shared records and public storage entries, and their
 * removals, reach everyone.
 */
import t, { type Test } from 'tap'
import { api, newUser, ref, type Api } from '../helpers/api.js'
import { openWebSocketFeed, type FeedClient, type FeedEvent } from '../helpers/changeFeed.js'
import { startInProcess } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess()
t.teardown(() => server.stop())
const { port } = server.client
const tenant = 'seen'
const owner = await server.client.createTenant(tenant)
const o = api(server.client, tenant, owner.token)
const ownerId = (await o.get('users/@self')).json.id as string
const ada = await newUser(server.client, tenant, o, 'Ada', { admin: true })
const bob = await newUser(server.client, tenant, o, 'Bob')
const carol = await newUser(server.client, tenant, o, 'Carol')
const callers: Record<string, Api> = { owner: o, ada: ada.api, bob: bob.api, carol: carol.api }

const open = (token: string, query: Record<string, string> = {}) => openWebSocketFeed(port, tenant, token, query)

/** Creates a tag as the owner: an event every subscriber gets, marking a point of the feed. */
const marker = (name: string) => o.create('time/tags', { name, color: '#000000' })

/** The events of `feed` up to and including the marker `id` (waits for it). */
async function eventsUntil(feed: FeedClient, id: string): Promise<FeedEvent[]> {
  for (let waited = 0; !feed.events.some((event) => event.id === id); waited += 1) {
    if (waited > 200) throw new Error(`the marker ${id} did not come (${feed.events.length} events)`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return feed.events.slice(0, feed.events.findIndex((event) => event.id === id) + 1)
}

/** Throws unless the answer has the status (a setup step failed); assertions come in the subtests. */
function expectStatus(answer: { status: number; text: string }, status: number, what: string): void {
  if (answer.status !== status) throw new Error(`${what}: ${answer.status} ${answer.text}`)
}

const described = (events: readonly FeedEvent[]) => events.map((event) => `${event.kind} ${event.type} ${event.id}`)

// The feeds of all four, open before anything happens (live), and the point to resume from.
const live = Object.fromEntries(await Promise.all(Object.entries(callers).map(async ([name, caller]) => [name, await open(caller.token)] as const))) as Record<string, FeedClient>
const start = await marker('start')
const startEvent = (await eventsUntil(live.owner as FeedClient, start)).at(-1) as FeedEvent

// Bob's secret key: made, renamed, removed.
const key = await bob.api.post('users/@self/secretkeys', { name: 'CI' })
expectStatus(key, 201, 'a secret key')
const keyId = key.json.id as string
const keyRead = await bob.api.get(`secretkeys/${keyId}`)
expectStatus(await bob.api.put(`secretkeys/${keyId}`, { ...keyRead.json, name: 'CI 2' }), 200, 'renaming the key')
expectStatus(await bob.api.del(`users/@self/secretkeys/${keyId}`), 200, 'removing the key')

// The owner's personal project: a task trashed and restored, a task trashed and its trash item emptied, a time
// record removed for good, then the project removed for good with what is left of it.
const personal = await o.create('time/projects', { name: 'Owner only', personal: true })
const kept = await o.create('time/tasks', { name: 'Kept', project: ref(personal) })
const emptied = await o.create('time/tasks', { name: 'Emptied', project: ref(personal) })
const record = await o.create('time/timerecords', { user: ref(ownerId), project: ref(personal), duration: 60_000, start: '2024-06-10T09:00:00Z' })
const keptTrash = (await o.del(`time/tasks/${kept}`)).json.trashItem.id as string
expectStatus(await o.get(`trash/${keptTrash}/$restore`), 200, 'restoring a task')
const emptiedTrash = (await o.del(`time/tasks/${emptied}`)).json.trashItem.id as string
expectStatus(await o.del(`trash/${emptiedTrash}`), 200, 'emptying a trash item')
expectStatus(await o.del(`time/timerecords/${record}`, { hard: true }), 200, 'removing a time record')
expectStatus(await o.del(`time/projects/${personal}`, { hard: true }), 200, 'removing the personal project')
const ownersOnly = new Set([personal, kept, emptied, record, keptTrash, emptiedTrash])

// Bob's private storage entry and a public one, stored and removed.
const storage = (path: string, method: 'POST' | 'DELETE') =>
  server.client.request(method, `/v1/storage/${path}`, { tenant, query: { token: bob.api.token }, rawBody: method === 'POST' ? 'text' : undefined, headers: { 'content-type': 'text/plain' } })
const privateEntry = (await storage('notes/mine', 'POST')).json.id as string
expectStatus(await storage('notes/mine', 'DELETE'), 200, 'removing the private entry')
const publicEntry = (await storage('notes/ours/public', 'POST')).json.id as string
expectStatus(await storage('notes/ours/public', 'DELETE'), 200, 'removing the public entry')

// A shared project, removed for good: its removal reaches everyone.
const shared = await o.create('time/projects', { name: 'Everyone' })
expectStatus(await o.del(`time/projects/${shared}`, { hard: true }), 200, 'removing the shared project')
const end = await marker('end')

function checkWhoGotWhat(t: Test, eventsOf: Record<string, FeedEvent[]>): void {
  const owners = eventsOf.owner as FeedEvent[]
  const bobs = eventsOf.bob as FeedEvent[]
  t.same(
    described(bobs.filter((event) => event.id === keyId)),
    [`created SecretKey ${keyId}`, `updated SecretKey ${keyId}`, `removed SecretKey ${keyId}`],
    'bob gets his secret key made, changed and removed',
  )
  t.same(
    described(bobs.filter((event) => event.id === privateEntry)),
    [`created StorageEntry ${privateEntry}`, `removed StorageEntry ${privateEntry}`],
    'bob gets his private storage entry stored and removed',
  )
  const ownerSaw = new Set(owners.map((event) => event.id))
  t.ok(
    [...ownersOnly].every((id) => ownerSaw.has(id)),
    'the owner gets the events of their personal project',
  )
  t.ok(
    owners.some((event) => event.kind === 'removed' && event.id === emptiedTrash),
    'the owner gets the removal of its trash item',
  )
  t.ok(
    owners.some((event) => event.kind === 'removed' && event.id === record),
    'the owner gets the removal of its time record',
  )
  for (const [name, events] of Object.entries(eventsOf)) {
    const ids = events.map((event) => event.id)
    if (name !== 'bob') {
      t.same(described(events.filter((event) => event.id === keyId || event.id === privateEntry)), [], `${name} gets nothing of bob's secret key and private entry`)
    }
    if (name !== 'owner') t.same(described(events.filter((event) => ownersOnly.has(event.id))), [], `${name} gets nothing of the owner's personal project, removals included`)
    t.ok(
      events.some((event) => event.kind === 'removed' && event.id === shared) && events.some((event) => event.kind === 'removed' && event.id === publicEntry),
      `${name} gets the removals of the shared project and the public entry`,
    )
    t.ok(ids.includes(start) && ids.includes(end), `${name} got both markers`)
  }
}

t.test('live', async (t) => {
  const eventsOf: Record<string, FeedEvent[]> = {}
  for (const [name, feed] of Object.entries(live)) {
    const events = await eventsUntil(feed, end)
    eventsOf[name] = events.slice(events.findIndex((event) => event.id === start))
    feed.close()
  }
  checkWhoGotWhat(t, eventsOf)
})

t.test('resumed from the log with since', async (t) => {
  const eventsOf: Record<string, FeedEvent[]> = {}
  for (const [name, caller] of Object.entries(callers)) {
    const resumed = await open(caller.token, { since: String(startEvent.seq - 1) })
    eventsOf[name] = await eventsUntil(resumed, end)
    resumed.close()
  }
  checkWhoGotWhat(t, eventsOf)
})
