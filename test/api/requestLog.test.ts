/*
 * The request log: lines are gathered and handed to the sink together
 * after FLUSH_EVERY_MS (or at once past 64 KiB); a real server started without
 * QUIET writes one JSON line per request to stdout whose request id is the
 * answer's X-Request-Id, with the route pattern, tenant, status, duration
 * and bytes; REQUEST_LOG=0 and QUIET=1 turn it off.
 */
import t from 'tap'
import { FLUSH_EVERY_MS, RequestLog, type RequestLogLine } from '../../src/observability/requestLog.js'
import { api } from '../helpers/api.js'
import { killHard, spawnServer, startInProcess, tempDataDir } from '../helpers/server.js'

const line = (index: number): RequestLogLine => ({
  time: 1,
  requestId: `id-${index}`,
  method: 'GET',
  route: '/v1/time/projects/:id',
  tenant: 'acme',
  status: 200,
  durationMs: 0.5,
  bytes: 10,
})

t.test('lines are written together after FLUSH_EVERY_MS, or at once past 64 KiB', async (t) => {
  const chunks: string[] = []
  const log = new RequestLog((chunk) => chunks.push(chunk))
  for (let index = 0; index < 3; index += 1) log.write(line(index))
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(chunks.length, 0, 'nothing written at once')
  await new Promise((resolve) => setTimeout(resolve, FLUSH_EVERY_MS + 20))
  t.equal(chunks.length, 1, 'one write for all three lines')
  t.same(
    chunks[0]
      ?.trimEnd()
      .split('\n')
      .map((text) => JSON.parse(text).requestId),
    ['id-0', 'id-1', 'id-2'],
  )
  chunks.length = 0
  let index = 0
  while (chunks.length === 0) {
    index += 1
    log.write(line(index))
  }
  t.ok(chunks[0] !== undefined && chunks[0].length >= 64 * 1024 && index < 1000, `flushed at once after ${index} lines`)
  log.flush()
  t.equal(chunks.join('').split('\n').length - 1, index, 'every line written exactly once')
})

t.test('QUIET=1 or REQUEST_LOG=0: no request log', async (t) => {
  const quiet = await startInProcess(tempDataDir('log-quiet'))
  t.equal(quiet.service.observers.requestLog, null)
  await quiet.stop()
  const off = await startInProcess(tempDataDir('log-off'), { QUIET: '0', REQUEST_LOG: '0' })
  t.equal(off.service.observers.requestLog, null)
  await off.stop()
})

t.test('a served request writes one JSON line on stdout', async (t) => {
  const server = await spawnServer(tempDataDir('log-spawn'), { QUIET: '0' })
  t.teardown(() => killHard(server))
  const { token } = await server.client.createTenant('acme')
  const acme = api(server.client, 'acme', token)
  const id = await acme.create('time/projects', { name: 'Logged' })
  const read = await acme.get(`time/projects/${id}`)
  const missing = await server.client.request('GET', '/nowhere', { tenant: 'acme' })
  const requestId = String(read.headers['x-request-id'])
  const linesOf = () =>
    server
      .output()
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as RequestLogLine)
  const deadline = Date.now() + 5000
  while (!linesOf().some((entry) => entry.requestId === String(missing.headers['x-request-id'])) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const lines = linesOf()
  const entry = lines.find((candidate) => candidate.requestId === requestId)
  t.match(entry, { method: 'GET', route: '/v1/time/projects/:id', tenant: 'acme', status: 200, bytes: read.body.length })
  t.ok(typeof entry?.durationMs === 'number' && entry.durationMs >= 0 && entry.durationMs < 10_000, 'duration in ms')
  t.ok(typeof entry?.time === 'number' && Math.abs(entry.time - Date.now()) < 60_000, 'time in epoch ms')
  t.equal(lines.filter((candidate) => candidate.requestId === requestId).length, 1, 'one line per request')
  t.match(
    lines.find((candidate) => candidate.requestId === String(missing.headers['x-request-id'])),
    { route: 'unmatched', status: 404, tenant: 'acme' },
    'requests refused before routing are logged too',
  )
  t.equal(new Set(lines.map((candidate) => candidate.requestId)).size, lines.length, 'request ids are unique')
  t.ok(lines.length >= 6, 'sign-up, confirm, login, create, read and the 404 are all logged')
})
