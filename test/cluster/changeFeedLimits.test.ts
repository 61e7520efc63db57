/*
 * The change feed's limits in cluster mode (issue 37, finding 3): each node
 * counts the subscriptions it holds against its own
 * CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_NODE, and a feed opened on a node that
 * does not hold the tenant (forwarded) takes its place on the holding node,
 * where the subscription is. Two nodes with a limit of 2 each: tenant A is
 * held by one node, tenant B by the other. Two feeds of A (one opened
 * straight at its node, one through the other node) fill A's node: a third
 * of A is refused 429 on either port, while B's node, holding none,
 * still accepts two of B.
 */
import t from 'tap'
import { adminKeyOf, adminRequest } from '../helpers/admin.js'
import { openEventSourceFeed, openWebSocketFeed, type FeedClient } from '../helpers/changeFeed.js'
import { leaseRowOf, nodeOfOwner, startCluster, type ChildNode, type TestCluster } from '../helpers/cluster.js'
import { parseMetrics, samplesOf } from '../helpers/prometheus.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  t.test('each node counts the feeds it holds against its own limit; a forwarded feed counts where it is held', async (t) => {
    const cluster = await startCluster({ nodes: 2, env: { RATE_LIMIT_REQUESTS: '0', CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_NODE: '2' } })
    t.teardown(() => cluster.stop())
    const [first, second] = cluster.nodes as [ChildNode, ChildNode]
    // Each tenant is made on a node of its own, which then holds it.
    const a = await first.client.createTenant('feeda')
    const b = await second.client.createTenant('feedb')
    const holderOf = async (tenant: string) => nodeOfOwner(cluster.nodes, (await leaseRowOf(cluster.databaseUrl, tenant))?.owner)
    t.equal(await holderOf('feeda'), first, 'tenant A is held by the first node')
    t.equal(await holderOf('feedb'), second, 'tenant B by the second')

    const opened: FeedClient[] = []
    t.teardown(() => {
      for (const feed of opened) feed.close()
    })
    opened.push(await openWebSocketFeed(first.port, 'feeda', a.token))
    opened.push(await openEventSourceFeed(second.port, 'feeda', a.token))
    t.same(await openCounts(cluster), [2, 0], "both feeds of A, the forwarded one too, hold a place on A's node")

    for (const node of [first, second]) {
      const refused = await openWebSocketFeed(node.port, 'feeda', a.token).then(
        (feed) => {
          opened.push(feed)
          return null
        },
        (error: { status?: number; body?: string }) => error,
      )
      t.match(refused, { status: 429, body: /TL01-9010.*CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_NODE/ }, `a third feed of A opened on ${node.nodeId} is refused by A's node`)
    }

    opened.push(await openWebSocketFeed(second.port, 'feedb', b.token), await openWebSocketFeed(cluster.client.port, 'feedb', b.token))
    t.same(await openCounts(cluster), [2, 2], "B's node takes two feeds of B: the limit is each node's own")
  })
}

/** The subscriptions each node holds, as its /metrics says. */
async function openCounts(cluster: TestCluster): Promise<number[]> {
  return Promise.all(
    cluster.nodes.map(async (node) => {
      const metrics = parseMetrics((await adminRequest(node.adminPort, 'GET', '/metrics', adminKeyOf(node.dataDir))).text)
      return samplesOf(metrics, 'timeledger_change_feed_subscriptions')[0]?.value ?? Number.NaN
    }),
  )
}
