/*
 * The limits on change feed subscriptions open at once (issue 37, finding
 * 3): per user of a tenant, per tenant and per node, WebSocket and event
 * stream alike. Past one, the request is refused 429 TL01-9010 with
 * Retry-After before the upgrade or the stream starts; a subscription that
 * ends gives its place back, and so does one whose upgrade never happened.
 * The server runs with small limits (2 per user, 3 per tenant, 4 per
 * node) so that each is reached on its own.
 */
import http from 'node:http'
import t from 'tap'
import { api, newUser } from '../helpers/api.js'
import { openEventSourceFeed, openWebSocketFeed, type FeedClient } from '../helpers/changeFeed.js'
import { isTestCluster, startInProcess } from '../helpers/server.js'
import { SubscriptionLimits } from '../../src/http/changes/subscriptionLimits.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess(undefined, {
  CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_USER: '2',
  CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_TENANT: '3',
  CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_NODE: '4',
})
t.teardown(() => server.stop())
const { port } = server.client
const owner = await server.client.createTenant('limited')
const o = api(server.client, 'limited', owner.token)
const bob = await newUser(server.client, 'limited', o, 'Bob')
const carol = await newUser(server.client, 'limited', o, 'Carol')
const dave = await newUser(server.client, 'limited', o, 'Dave')
const other = await server.client.createTenant('elsewhere')

interface Refusal {
  status: number | undefined
  code: string | undefined
  retryAfter: string | undefined
  message: string
}

/** Opens a WebSocket feed, expecting a refusal: its status, code, Retry-After and message. */
async function refusedWebSocket(tenant: string, token: string): Promise<Refusal> {
  const failure = await openWebSocketFeed(port, tenant, token).then(
    (feed) => {
      feed.close()
      return null
    },
    (error: unknown) => error as { status: number; body: string; headers: http.IncomingHttpHeaders },
  )
  const body = failure === null ? {} : (JSON.parse(failure.body) as { code?: string; message?: string })
  return { status: failure?.status, code: body.code, retryAfter: failure?.headers['retry-after'] as string | undefined, message: body.message ?? '' }
}

/** Asks for the feed as an event stream, expecting a refusal. */
function refusedEventStream(tenant: string, token: string): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: `/v1/changes?token=${token}`, headers: { host: `${tenant}.localhost`, accept: 'text/event-stream' }, agent: false }, (response) => {
      if (response.statusCode === 200) {
        request.destroy()
        resolve({ status: 200, code: undefined, retryAfter: undefined, message: '' })
        return
      }
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { code: string; message: string }
        resolve({ status: response.statusCode, code: body.code, retryAfter: response.headers['retry-after'], message: body.message })
      })
    })
    request.on('error', reject)
  })
}

const opened: FeedClient[] = []
t.teardown(() => {
  for (const feed of opened) feed.close()
})

/** Opens a WebSocket feed, retrying while the place of a stream that just ended is not back yet. */
async function openOnceFree(tenant: string, token: string): Promise<FeedClient> {
  for (let tries = 0; ; tries += 1) {
    const feed = await openWebSocketFeed(port, tenant, token).catch(() => null)
    if (feed !== null) return feed
    if (tries > 100) throw new Error('the place never came back')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

t.test('per user: the third of one user is refused, WebSocket and event stream alike', async (t) => {
  const first = await openWebSocketFeed(port, 'limited', bob.api.token)
  const second = await openEventSourceFeed(port, 'limited', bob.api.token)
  for (const refusal of [await refusedWebSocket('limited', bob.api.token), await refusedEventStream('limited', bob.api.token)]) {
    t.match(refusal, { status: 429, code: 'TL01-9010', retryAfter: /^\d+$/, message: /CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_USER/ })
  }
  first.close()
  opened.push(await openOnceFree('limited', bob.api.token))
  t.pass('the place of a stream that ended is taken again')
  if (isTestCluster(server)) {
    // Behind HAProxy a quiet event stream's end reaches the node with its next keep-alive comment (25 s).
    opened.push(second)
    return
  }
  second.close()
  opened.push(await openOnceFree('limited', bob.api.token))
  t.pass('so is the place of a quiet event stream its client closed')
})

t.test('per tenant: with 3 open in the tenant, another user is refused', async (t) => {
  opened.push(await openWebSocketFeed(port, 'limited', carol.api.token))
  t.match(await refusedWebSocket('limited', dave.api.token), { status: 429, code: 'TL01-9010', retryAfter: /^\d+$/, message: /CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_TENANT/ })
  t.match(await refusedEventStream('limited', dave.api.token), { status: 429, message: /PER_TENANT/ })
})

t.test('per node: with 4 open on the node, a user of another tenant is refused', async (t) => {
  opened.push(await openWebSocketFeed(port, 'elsewhere', other.token))
  t.match(await refusedWebSocket('elsewhere', other.token), { status: 429, code: 'TL01-9010', retryAfter: /^\d+$/, message: /CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_NODE/ })
  t.match(await refusedEventStream('elsewhere', other.token), { status: 429, message: /PER_NODE/ })
  // The open ones still work.
  const tag = await o.create('time/tags', { name: 'still told', color: '#000000' })
  const [first] = opened
  t.equal((await (first as FeedClient).waitFor(1))[0]?.id, tag)
})

t.test('a place whose stream never starts is given back', async (t) => {
  const limits = new SubscriptionLimits({ changeFeedMaxSubscriptionsPerUser: 1, changeFeedMaxSubscriptionsPerTenant: 0, changeFeedMaxSubscriptionsPerNode: 0 }, 20)
  const held = limits.take('acme', 'u1')
  held.started()
  t.throws(() => limits.take('acme', 'u1'), { code: 'TL01-9010' }, 'held while its stream runs')
  held.release()
  limits.take('acme', 'u1')
  t.equal(limits.open, 1)
  t.throws(() => limits.take('acme', 'u1'), { code: 'TL01-9010' })
  await new Promise((resolve) => setTimeout(resolve, 60))
  t.equal(limits.open, 0, 'never started: given back')
  limits.take('acme', 'u1').release()
  t.equal(limits.open, 0)
})
