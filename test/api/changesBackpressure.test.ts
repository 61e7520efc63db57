/*
 * An event stream whose client stops reading, then reads again, gets every
 * event (streamedAnswer.ts). Its answer waits for the socket's writable
 * event more than once; uWS puts a response's writable handler back after
 * calling it, over any handler registered meanwhile, and the writer
 * resumes (and may wait again) inside that call: a writer that registered
 * a handler per wait was never woken again, and the stream stalled for
 * good once its client had paused. The stream's own limit is raised here
 * so that the events written while the client pauses (about 9 MB, more
 * than the sockets' buffers take) are all kept for it.
 */
import http from 'node:http'
import t from 'tap'
import { api } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'

const WRITES = 600
const NOTE = 'n'.repeat(15_000)
/** How long the client may take to read every event once it reads again: a kill limit, not a measure of speed. */
const READ_AGAIN_MS = 60_000

const server = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '0', CHANGE_FEED_MAX_BUFFERED_BYTES: String(64 * 1024 * 1024) })
t.teardown(() => server.stop())
const { port } = server.client
const owner = await server.client.createTenant('paused')
const o = api(server.client, 'paused', owner.token)

t.test('an event stream that pauses, then reads again, gets every event', async (t) => {
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port, path: `/v1/changes?token=${owner.token}&resources=time/projects`, headers: { host: 'paused.localhost', accept: 'text/event-stream' }, agent: false },
      resolve,
    )
    request.on('error', reject)
  })
  t.equal(response.statusCode, 200)
  response.pause()
  let next = 0
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < WRITES) {
        next += 1
        await o.create('time/projects', { name: `p ${next}`, note: NOTE })
      }
    }),
  )
  const count = await new Promise<number>((resolve) => {
    let events = 0
    let partial = ''
    const timer = setTimeout(() => resolve(events), READ_AGAIN_MS)
    response.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n\n')
      partial = parts.pop() ?? ''
      events += parts.filter((part) => part.includes('event: change\n')).length
      if (events < WRITES) return
      clearTimeout(timer)
      resolve(events)
    })
    response.resume()
  })
  response.destroy()
  t.equal(count, WRITES, 'every event came once the client read again')
})
