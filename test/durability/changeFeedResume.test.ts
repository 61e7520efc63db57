/*
 * The change feed resumes across kill -9 (issue 30). A server in a child
 * process takes writes from 8 concurrent writers while a WebSocket
 * subscriber reads the feed; the subscriber leaves after a random number of
 * events, the writes go on, and a moment later the server is killed with
 * SIGKILL. It is started again on the same data directory and the
 * subscriber reconnects with `since` = the last event it got: the events
 * before and after together hold every acknowledged write exactly
 * once, in log order (a write whose answer the kill took may be there too:
 * it was durable). The same again as Server-Sent Events, whose
 * Last-Event-ID is the resume point.
 */
import t from 'tap'
import { api } from '../helpers/api.js'
import { openEventSourceFeed, openWebSocketFeed, type FeedClient, type FeedEvent } from '../helpers/changeFeed.js'
import { killHard, spawnServer, tempDataDir, type ChildServer } from '../helpers/server.js'

const ENV = { RATE_LIMIT_REQUESTS: '0' }
const dataDir = tempDataDir('feed-resume')
let server: ChildServer = await spawnServer(dataDir, ENV)
t.teardown(() => killHard(server))
const tenant = 'resume'
const { token } = await server.client.createTenant(tenant)

type Open = (port: number, query: Record<string, string>) => Promise<FeedClient>
const FORMS: [string, Open][] = [
  ['WebSocket', (port, query) => openWebSocketFeed(port, tenant, token, query)],
  ['event stream', (port, query) => openEventSourceFeed(port, tenant, token, query)],
]

for (const [form, open] of FORMS) {
  t.test(`${form}: every acknowledged write once, in order, across kill -9`, async (t) => {
    const resource = form === 'WebSocket' ? 'time/tags' : 'time/clients'
    const first = await open(server.client.port, { resources: resource })
    const owner = api(server.client, tenant, token)
    const acknowledged = new Set<string>()
    let stop = false
    const writers = Array.from({ length: 8 }, async (_, writer) => {
      for (let n = 0; !stop; n += 1) {
        const answer = await owner.post(resource, { name: `${form}-${writer}-${n}`, color: '#000000' }).catch(() => null)
        if (answer === null) return
        if (answer.status === 201) acknowledged.add(answer.json.id as string)
      }
    })
    // The subscriber goes away at a random event; the writes go on, and the server is killed a little later.
    const cut = 20 + Math.floor(Math.random() * 200)
    await first.waitFor(cut, 30_000)
    first.close()
    const before = first.events.slice(0, cut)
    await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 500))
    await killHard(server)
    stop = true
    await Promise.all(writers)
    t.ok(acknowledged.size > cut, `${acknowledged.size} writes acknowledged before the kill, the subscriber left after ${cut} events`)
    const last = before.at(-1) as FeedEvent

    server = await spawnServer(dataDir, ENV)
    const resumed = await open(server.client.port, { resources: resource, since: `${last.seq}.${last.op}` })
    // One write after the restart marks the end of what the log held.
    const marker = await api(server.client, tenant, token).create(resource, { name: `${form}-marker`, color: '#000000' })
    for (let waited = 0; !resumed.events.some((event) => event.id === marker); waited += 1) {
      if (waited > 300) throw new Error(`the marker did not come (${resumed.events.length} events)`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    resumed.close()
    const all = [...before, ...resumed.events]
    const ids = all.map((event) => event.id)
    t.equal(new Set(ids).size, ids.length, 'no event twice')
    const missing = [...acknowledged].filter((id) => !ids.includes(id))
    t.same(missing, [], 'every acknowledged write is an event')
    const positions = all.map((event) => event.seq * 1000 + event.op)
    t.same(
      positions,
      [...positions].sort((x, y) => x - y),
      'in log order',
    )
    t.ok(all.every((event) => event.kind === 'created'))
  })
}
