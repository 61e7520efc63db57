/*
 * The change feed on a node that does not hold the tenant (issue 30,
 * cluster mode): a WebSocket and an event stream opened on the other
 * node's public port reach the holding node through forwarding (the
 * WebSocket proxied as one, the event stream as a streamed answer), a
 * refusal of the holding node comes back as its error answer, and when
 * the holding node is killed (SIGKILL) the WebSocket is closed with 4503;
 * reconnected with `since` once the other node took the tenant over, it
 * gets every acknowledged write's event, with no gap and no duplicate
 * (the events are read back from PostgreSQL's log).
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { leaseRowOf, nodeOfOwner, startCluster } from '../helpers/cluster.js'
import { openEventSourceFeed, openWebSocketFeed, type FeedClient, type FeedEvent } from '../helpers/changeFeed.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  const TENANT = 'feedmove'
  const LEASE_MS = 1_500
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  t.test('a feed opened on the other node is forwarded, and resumes with no gap after the holding node dies', async (t) => {
    const cluster = await startCluster({ nodes: 2, leaseMs: LEASE_MS, env: { RATE_LIMIT_REQUESTS: '0' } })
    t.teardown(() => cluster.stop())
    const { token } = await cluster.client.createTenant(TENANT)
    const create = (client: typeof cluster.client, id: string) =>
      client.request('POST', '/v1/time/projects', { tenant: TENANT, query: { token }, body: { id, name: `p ${id}` }, timeoutMs: 10_000 }).catch(() => null)
    t.equal((await create(cluster.client, randomUUID()))?.status, 201)
    const holder = nodeOfOwner(cluster.nodes, (await leaseRowOf(cluster.databaseUrl, TENANT))?.owner)
    const other = cluster.nodes.find((node) => node !== holder)
    if (holder === undefined || other === undefined) throw new Error('no node holds the tenant')

    const refused = await openWebSocketFeed(other.port, TENANT, token, { since: '999999' }).catch((error: { status?: number; body?: string }) => error)
    t.equal((refused as { status?: number }).status, 400, "the holding node's refusal comes back as its error answer")

    const query = { resources: 'time/projects' }
    const ws = await openWebSocketFeed(other.port, TENANT, token, query)
    const sse = await openEventSourceFeed(other.port, TENANT, token, query)
    const acked: string[] = []
    for (let index = 0; index < 5; index += 1) {
      const id = randomUUID()
      if ((await create(holder.client, id))?.status === 201) acked.push(id)
    }
    for (const feed of [ws, sse])
      t.same(
        (await feed.waitFor(5)).map((event) => event.id),
        acked,
        'the events arrive through the node that does not hold the tenant',
      )
    sse.close()
    t.equal(nodeOfOwner(cluster.nodes, (await leaseRowOf(cluster.databaseUrl, TENANT))?.owner), holder, 'the tenant stayed where it was: the feeds were forwarded')

    // Writers through the surviving node: forwarded to the holder until it dies, then refused until the lease runs out.
    let stopping = false
    const writer = async () => {
      while (!stopping) {
        const id = randomUUID()
        const answer = await create(other.client, id)
        if (answer?.status === 201) acked.push(id)
        else await sleep(50)
      }
    }
    const writers = [writer(), writer()]
    await sleep(300)
    const killedAt = acked.length
    holder.child.kill('SIGKILL')
    const end = await ws.closed
    t.equal(end.code, 4503, `the WebSocket is closed with 4503 when the holding node dies (${end.reason})`)

    const feeds: FeedClient[] = [ws]
    const seen = () => feeds.flatMap((feed) => feed.events)
    const deadline = Date.now() + 30_000
    let again: FeedClient | null = null
    while (again === null && Date.now() < deadline) {
      const last = seen().at(-1) as FeedEvent
      again = await openWebSocketFeed(other.port, TENANT, token, { ...query, since: `${last.seq}.${last.op}` }).catch(() => null)
      if (again === null) await sleep(100)
    }
    if (again === null) throw new Error('the feed could not be opened again')
    feeds.push(again)
    while (acked.length < killedAt + 10 && Date.now() < deadline) await sleep(50)
    stopping = true
    await Promise.all(writers)
    t.ok(acked.length > killedAt, `writes were acknowledged after the kill (${acked.length - killedAt})`)
    const waitAll = async () => {
      while (Date.now() < deadline) {
        const ids = new Set(seen().map((event) => event.id))
        if (acked.every((id) => ids.has(id))) return
        await sleep(50)
      }
    }
    await waitAll()
    const events = seen()
    const ids = events.map((event) => event.id)
    t.same(
      acked.filter((id) => !ids.includes(id)),
      [],
      `every acknowledged write's event arrived (${acked.length})`,
    )
    t.equal(new Set(ids).size, ids.length, 'none twice')
    const positions = events.map((event) => event.seq * 1_000 + event.op)
    t.same(
      positions,
      [...positions].sort((x, y) => x - y),
      'in log order across the reconnect',
    )
    again.close()
  })
}
