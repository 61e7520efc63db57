/*
 * A timer created without a start runs (issue 38): an impulse is a
 * stopwatch unless it says otherwise, and a stopwatch written without a
 * start and a stop starts at the time of that write — the write's own time,
 * decided before it is logged, so the start is the object's createdAt and a
 * restart (a replay of the log) shows the same start. `$stop` then makes
 * its time record. An impulse of another mode keeps what it was given.
 */
import t from 'tap'
import { api } from '../helpers/api.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'

const dataDir = tempDataDir('impulse-start')
let server = await startInProcess(dataDir)
t.teardown(() => server.stop())
const created = await server.client.createTenant('timers')
let owner = api(server.client, 'timers', created.token)

const msOf = (date: unknown) => Number(/^\/Date\((-?\d+)\)\/$/.exec(String(date))?.[1])

t.test('an impulse created as {} is a running stopwatch, started by its write', async (t) => {
  const before = Date.now()
  const answer = await owner.post('time/impulses', {}, { response_object: true })
  t.equal(answer.status, 201, answer.text)
  t.equal(answer.json.mode, 'STOPWATCH', 'a stopwatch unless it says otherwise')
  t.equal(answer.json.stop, null)
  t.equal(msOf(answer.json.start), msOf(answer.json.createdAt), 'started at the time of its write')
  t.ok(msOf(answer.json.start) >= before && msOf(answer.json.start) <= Date.now(), 'which is now')
  t.same(await owner.ids('time/impulses/@stopwatch'), [answer.json.id], 'among the stopwatches')
})

t.test('a stopwatch without a start stops into a time record', async (t) => {
  const id = await owner.create('time/impulses', { mode: 'STOPWATCH', description: 'unstarted' })
  const started = msOf((await owner.get(`time/impulses/${id}`)).json.start)
  const stopped = await owner.post(`time/impulses/${id}/$stop`)
  t.equal(stopped.status, 200, stopped.text)
  t.match(stopped.json, { description: 'unstarted', start: `/Date(${started})/` })
  t.equal(stopped.json.duration, msOf(stopped.json.stop) - started, 'duration = stop − start')
  t.equal((await owner.get(`time/impulses/${id}`)).status, 404, 'the impulse is gone')
})

t.test('what a write gives is kept', async (t) => {
  const given = await owner.post('time/impulses', { mode: 'STOPWATCH', start: '2026-01-05T08:00:00Z' }, { response_object: true })
  t.equal(given.json.start, `/Date(${Date.parse('2026-01-05T08:00:00Z')})/`, 'a start given is the start')
  const paused = await owner.post('time/impulses', { mode: 'PAUSE' }, { response_object: true })
  t.equal(paused.json.start, null, 'a PAUSE impulse does not start by itself')
  const stop = await owner.get(`time/impulses/${paused.json.id}/$stop`)
  t.equal(stop.status, 412, 'and is not running')
  t.equal(stop.json.code, 'TL01-1106')
  const finished = await owner.post('time/impulses', { mode: 'STOPWATCH', stop: '2026-01-05T08:00:00Z' }, { response_object: true })
  t.equal(finished.json.start, null, 'a stopwatch with a stop is not started')
})

t.test('a restart (the log replayed) shows the same start', async (t) => {
  const id = await owner.create('time/impulses', { description: 'across a restart' })
  const start = (await owner.get(`time/impulses/${id}`)).json.start
  await server.stop()
  await new Promise((resolve) => setTimeout(resolve, 20))
  server = await startInProcess(dataDir)
  owner = api(server.client, 'timers', created.token)
  const again = await owner.get(`time/impulses/${id}`)
  t.equal(again.status, 200, again.text)
  t.equal(again.json.start, start, 'the start the write decided')
})
