/*
 * A bug inside a handler is one request's 500, never the end of the
 * process, and never a change in memory that the log does not hold.
 *
 * The bug is injected: the handler of one fixed route (the reports) is
 * replaced for a test by one that throws, gives no answer, or throws in
 * the middle of a write after applying part of it. Each answers 500
 * TL01-9001 naming the request id (the one in X-Request-Id), the server
 * serves on, and nothing the failed write or batch applied is seen, before
 * or after a restart. A batch whose item fails with a 5xx fails whole:
 * the items before it are rolled back with it (they were once kept in
 * memory, listed, and lost at the next restart).
 */
import t, { type Test } from 'tap'
import { buildRecord } from '../../src/domain/recordMaking.js'
import { resourceByType } from '../../src/domain/resources/index.js'
import type { Call } from '../../src/http/call.js'
import type { ApiResponse } from '../../src/http/response.js'
import { ROUTES, type Route } from '../../src/http/routeTable.js'
import { api, type Api } from '../helpers/api.js'
import type { TestResponse } from '../helpers/http.js'
import { startInProcess, type InProcessServer } from '../helpers/server.js'

const reportRoute = ROUTES.find((candidate) => candidate.pattern === 'time/reports/:name') as Route
const realReport = reportRoute.handle

/** Runs `body` with the reports' handler replaced by `handle`. */
async function withReportHandler(handle: (call: Call) => unknown, body: () => Promise<void>): Promise<void> {
  reportRoute.handle = handle as Route['handle']
  try {
    await body()
  } finally {
    reportRoute.handle = realReport
  }
}

function expectInternalError(t: Test, response: TestResponse): void {
  t.equal(response.status, 500, response.text)
  t.equal(response.json?.code, 'TL01-9001')
  const requestId = response.headers['x-request-id']
  t.ok(typeof requestId === 'string' && requestId.length > 0, 'the answer has a request id')
  t.match(response.json?.description, `request id ${String(requestId)}`, 'the error names the request once')
  t.notMatch(response.json?.description, /request id .*request id/)
}

let server: InProcessServer = await startInProcess()
t.teardown(() => server.stop())
const owner = await server.client.createTenant('faults')
let a: Api = api(server.client, 'faults', owner.token)

const projectNames = async (): Promise<string[]> => ((await a.get('time/projects')).json as { name: string }[]).map((project) => project.name).sort()

/** A write that applies a project and then fails with a bug. */
function failingWrite(name: string) {
  return async (call: Call): Promise<ApiResponse> =>
    (call.tenant as NonNullable<Call['tenant']>).write((tx) => {
      tx.put('Project', buildRecord(resourceByType('Project'), { name }, tx.now))
      throw new TypeError(`a bug after writing ${name}`)
    })
}

t.test('a handler that throws synchronously answers 500 and the server serves on', async (t) => {
  await withReportHandler(
    () => {
      throw new TypeError('a bug')
    },
    async () => expectInternalError(t, await a.get('time/reports/readtotals')),
  )
  t.equal((await a.get('time/reports/readtotals')).status, 200, 'the next request is served')
})

t.test('a handler that gives something else than an answer is a 500', async (t) => {
  for (const wrong of [undefined, null, {}, { status: 200, headers: {}, body: undefined }, 'text']) {
    await withReportHandler(
      async () => wrong,
      async () => expectInternalError(t, await a.get('time/reports/readtotals')),
    )
    await withReportHandler(
      () => wrong,
      async () => expectInternalError(t, await a.get('time/reports/readtotals')),
    )
  }
  t.equal((await a.get('time/projects/$count')).status, 200)
})

t.test('a write that fails with a bug halfway is rolled back whole', async (t) => {
  await withReportHandler(failingWrite('HALFWAY'), async () => expectInternalError(t, await a.get('time/reports/readtotals')))
  t.same(await projectNames(), [], 'the applied half is gone')
  t.equal((await a.post('time/projects', { name: 'after' })).status, 201, 'the next write goes through')
  t.same(await projectNames(), ['after'])
})

t.test('a batch whose item fails with a 5xx applies none of its items', async (t) => {
  await withReportHandler(failingWrite('INSIDE'), async () => {
    const response = await a.post('batch', [
      { id: 'ghost', method: 'POST', path: '/v1/time/projects', body: { name: 'GHOST' } },
      { id: 'other', method: 'POST', path: '/v1/time/projects', body: { name: 'OTHER' }, transaction: 'g' },
      { id: 'bug', method: 'GET', path: '/v1/time/reports/readtotals' },
      { id: 'late', method: 'POST', path: '/v1/time/projects', body: { name: 'LATE' } },
    ])
    expectInternalError(t, response)
  })
  t.same(await projectNames(), ['after'], 'no item of the failed batch is seen')
  const batch = await a.post('batch', [{ id: 'one', method: 'POST', path: '/v1/time/projects', body: { name: 'NEXT' } }])
  t.equal(batch.status, 200, 'the next batch runs')
  t.same(await projectNames(), ['NEXT', 'after'])
})

t.test('a batch that throws outside its items applies none of them', async (t) => {
  await withReportHandler(
    async () => ({ status: 200, headers: {}, body: undefined }),
    async () => {
      const response = await a.post('batch', [
        { id: 'ghost', method: 'POST', path: '/v1/time/projects', body: { name: 'GHOST' } },
        { id: 'broken', method: 'GET', path: '/v1/time/reports/readtotals' },
      ])
      t.equal(response.status, 500, response.text)
      t.equal(response.json?.code, 'TL01-9001')
    },
  )
  t.same(await projectNames(), ['NEXT', 'after'])
})

t.test('after a restart the state is what was acknowledged', async (t) => {
  const dataDir = server.dataDir
  await server.stop()
  server = await startInProcess(dataDir)
  a = api(server.client, 'faults', await server.client.login('faults', owner.email, owner.password))
  t.same(await projectNames(), ['NEXT', 'after'])
})
