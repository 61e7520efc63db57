/*
 * Where the change feed can resume from: an EventSource's Last-Event-ID
 * resumes like `since`; a `since` older than the log still holds (pruned
 * after a snapshot once LOG_RETENTION_MS passed) is refused 410 TL01-1111
 * before the stream starts, telling the client to reload.
 */
import http from 'node:http'
import t from 'tap'
import { api } from '../helpers/api.js'
import { openWebSocketFeed, type FeedEvent } from '../helpers/changeFeed.js'
import { activeActor, startInProcess } from '../helpers/server.js'

const server = await startInProcess(undefined, { LOG_RETENTION_MS: '1', SNAPSHOTS_KEPT: '1' })
t.teardown(() => server.stop())
const { port } = server.client
const owner = await server.client.createTenant('history')
const a = api(server.client, 'history', owner.token)

/** The ids of the first `count` events of an event stream opened with these headers. */
function streamIds(headers: Record<string, string>, count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port, path: `/v1/changes?token=${owner.token}&resources=time/tags`, headers: { host: 'history.localhost', accept: 'text/event-stream', ...headers }, agent: false },
      (response) => {
        let text = ''
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString()
          const ids = [...text.matchAll(/^data: (.*)$/gm)].map((match) => (JSON.parse(match[1] as string) as FeedEvent).id)
          if (ids.length < count) return
          request.destroy()
          resolve(ids.slice(0, count))
        })
      },
    )
    request.on('error', reject)
  })
}

t.test('Last-Event-ID resumes an event stream', async (t) => {
  const feed = await openWebSocketFeed(port, 'history', owner.token, { resources: 'time/tags' })
  const ids: string[] = []
  for (let n = 0; n < 5; n += 1) ids.push(await a.create('time/tags', { name: `tag ${n}`, color: '#000000' }))
  const events = await feed.waitFor(5)
  feed.close()
  const second = events[1] as FeedEvent
  t.same(await streamIds({ 'last-event-id': `${second.seq}.${second.op}` }, 3), ids.slice(2))
})

t.test('a since older than the log holds is refused 410 before the stream starts', async (t) => {
  const feed = await openWebSocketFeed(port, 'history', owner.token, { resources: 'time/tags' })
  await a.create('time/tags', { name: 'early', color: '#000000' })
  const [early] = await feed.waitFor(1)
  feed.close()
  // Two snapshots LOG_RETENTION_MS (1 ms) apart: the log under the older one is no longer needed, and goes.
  const actor = activeActor(server, 'history')
  await actor?.snapshot()
  await new Promise((resolve) => setTimeout(resolve, 20))
  await a.create('time/tags', { name: 'late', color: '#000000' })
  await actor?.snapshot()
  const refused = await openWebSocketFeed(port, 'history', owner.token, { since: String((early as FeedEvent).seq - 1) }).then(
    () => null,
    (error: unknown) => error as { status: number; body: string },
  )
  t.equal(refused?.status, 410)
  t.match(JSON.parse(refused?.body ?? '{}'), { code: 'TL01-1111', message: /reload/ })
  const current = await openWebSocketFeed(port, 'history', owner.token, { since: String((early as FeedEvent).seq + 1) })
  t.pass('a since the log reaches still resumes')
  current.close()
})
