/*
 * The admin listener: loopback only, the admin key generated into the data
 * directory (mode 0600) or taken from ADMIN_KEY, 401 with the error body
 * without it, health checks without it, /readyz 503 once a stop begins,
 * routes registered at run time with captured parameters, RECOVER_ON_START
 * loading every tenant (up to MAX_ACTIVE_TENANTS) before the service is ready,
 * with /readyz answering 503 starting between two tenants' loads meanwhile.
 */
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { ApiError } from '../../src/domain/errors.js'
import { jsonAnswer } from '../../src/admin/adminServer.js'
import { adminKeyOf, adminRequest } from '../helpers/admin.js'
import { loadConfig } from '../../src/config.js'
import { startService } from '../../src/service.js'
import { freePort } from '../helpers/freePort.js'
import { startInProcess, tempDataDir, testEnv } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { adminPort } = server.service
const key = adminKeyOf(server.dataDir)

t.test('the generated admin key is kept with mode 0600', async (t) => {
  t.ok(key.length >= 32, 'a long key')
  t.equal(fs.statSync(path.join(server.dataDir, 'admin-key')).mode & 0o777, 0o600)
  t.not(adminPort, server.service.port, 'a listener of its own')
})

t.test('without the key: 401 in the error body', async (t) => {
  for (const [label, given] of [
    ['no key', null],
    ['wrong key', `${key}x`],
    ['empty', ''],
  ] as const) {
    const answer = await adminRequest(adminPort, 'GET', '/metrics', given)
    t.equal(answer.status, 401, label)
    const body = JSON.parse(answer.text)
    t.match(body, { status: 401, code: 'TL01-1001', message: /Bearer/, constraintViolation: null }, `${label}: error body`)
    t.equal(answer.headers['www-authenticate'], 'Bearer')
  }
  const unknown = await adminRequest(adminPort, 'GET', '/no/such/route', null)
  t.equal(unknown.status, 401, 'unknown paths do not reveal themselves without the key')
})

t.test('with the key: unknown path 404, wrong method 405', async (t) => {
  const unknown = await adminRequest(adminPort, 'GET', '/no/such/route', key)
  t.equal(unknown.status, 404)
  t.equal(JSON.parse(unknown.text).code, 'TL01-9003')
  const wrongMethod = await adminRequest(adminPort, 'POST', '/healthz', key)
  t.equal(wrongMethod.status, 405)
  t.equal(wrongMethod.headers.allow, 'GET')
})

t.test('health checks answer without the key', async (t) => {
  const health = await adminRequest(adminPort, 'GET', '/healthz', null)
  t.equal(health.status, 200)
  const ready = await adminRequest(adminPort, 'GET', '/readyz', null)
  t.equal(ready.status, 200)
  t.same(JSON.parse(ready.text), { status: 'ready' })
})

t.test('routes registered at run time: parameters, body, errors', async (t) => {
  server.service.admin.route('POST', '/echo/:tenant', (request) => jsonAnswer(200, { tenant: request.params.tenant, body: request.body.toString() }))
  server.service.admin.route('GET', '/refuse', () => {
    throw new ApiError('TL01-1105', 'refused on purpose')
  })
  server.service.admin.route('GET', '/bug', async () => {
    throw new Error('a bug on purpose')
  })
  const echo = await adminRequest(adminPort, 'POST', '/echo/acme%2Dtwo', key, 'hello')
  t.equal(echo.status, 200)
  t.same(JSON.parse(echo.text), { tenant: 'acme-two', body: 'hello' })
  t.equal((await adminRequest(adminPort, 'POST', '/echo/acme', null, 'hello')).status, 401, 'registered routes need the key')
  const refused = await adminRequest(adminPort, 'GET', '/refuse', key)
  t.equal(refused.status, 400)
  t.equal(JSON.parse(refused.text).message, 'refused on purpose')
  const originalError = console.error
  console.error = () => undefined
  const bug = await adminRequest(adminPort, 'GET', '/bug', key).finally(() => (console.error = originalError))
  t.equal(bug.status, 500)
  t.match(JSON.parse(bug.text), { code: 'TL01-9001', description: /^request id / })
  t.throws(() => server.service.admin.route('GET', '/refuse', () => jsonAnswer(200, {})), /registered twice/)
})

t.test('ADMIN_KEY from the environment; /readyz 503 once stopping', async (t) => {
  const other = await startInProcess(tempDataDir('admin-key'), { ADMIN_KEY: 'configured-admin-key-0123456789' })
  t.notOk(fs.existsSync(path.join(other.dataDir, 'admin-key')), 'no key file when ADMIN_KEY is set')
  t.equal((await adminRequest(other.service.adminPort, 'GET', '/no/such', 'configured-admin-key-0123456789')).status, 404, 'the configured key works')
  t.equal((await adminRequest(other.service.adminPort, 'GET', '/no/such', key)).status, 401, 'another server’s key does not')
  other.service.readiness.markStopping()
  const ready = await adminRequest(other.service.adminPort, 'GET', '/readyz', null)
  t.equal(ready.status, 503)
  t.same(JSON.parse(ready.text), { status: 'stopping' })
  await other.stop()
})

t.test('RECOVER_ON_START activates every tenant (up to MAX_ACTIVE_TENANTS) before ready', async (t) => {
  const dataDir = tempDataDir('recover-on-start')
  const first = await startInProcess(dataDir)
  for (const tenant of ['warm1', 'warm2', 'warm3']) await first.client.createTenant(tenant)
  await first.stop()
  const lazy = await startInProcess(dataDir)
  t.equal(lazy.service.services.registry.activeCount, 0, 'by default tenants load on their first request')
  await lazy.stop()
  const eager = await startInProcess(dataDir, { RECOVER_ON_START: '1' })
  t.equal(eager.service.services.registry.activeCount, 3, 'every tenant is in memory once startService resolves')
  t.equal((await adminRequest(eager.service.adminPort, 'GET', '/readyz', null)).status, 200)
  await eager.stop()
  const capped = await startInProcess(dataDir, { RECOVER_ON_START: '1', MAX_ACTIVE_TENANTS: '2' })
  t.equal(capped.service.services.registry.activeCount, 2, 'no more than the cap')
  await capped.stop()
})

t.test('/readyz says starting while RECOVER_ON_START loads the tenants, ready once all are in memory', async (t) => {
  const dataDir = tempDataDir('readyz-starting')
  const first = await startInProcess(dataDir, { RATE_LIMIT_REQUESTS: '0' })
  const tenants = Array.from({ length: 30 }, (_, index) => `load${index}`)
  for (const tenant of tenants) {
    const { token } = await first.client.createTenant(tenant)
    await Promise.all(Array.from({ length: 20 }, (_, index) => first.client.request('POST', '/v1/time/projects', { tenant, query: { token }, body: { name: `p${index}` } })))
  }
  await first.stop()

  const adminPort = await freePort()
  const starting = startService(loadConfig(testEnv(dataDir, { RECOVER_ON_START: '1', ADMIN_PORT: String(adminPort) })))
  let started = false
  void starting.then(
    () => (started = true),
    () => (started = true),
  )
  const seen: { status: number; phase: string }[] = []
  while (!started) {
    const answer = await adminRequest(adminPort, 'GET', '/readyz', null).catch(() => null)
    if (answer !== null) seen.push({ status: answer.status, phase: (JSON.parse(answer.text) as { status: string }).status })
  }
  const service = await starting
  t.teardown(() => service.stop())
  const whileStarting = seen.filter((answer) => answer.phase === 'starting')
  t.ok(whileStarting.length > 0, `answered 'starting' ${whileStarting.length} times while the tenants loaded`)
  t.ok(
    whileStarting.every((answer) => answer.status === 503),
    "'starting' is a 503",
  )
  // The last poll may have been sent just before startService resolved and answered just after.
  t.ok(
    seen.slice(0, -1).every((answer) => answer.phase === 'starting'),
    'never ready while tenants were still loading',
  )
  t.equal(service.services.registry.activeCount, tenants.length, 'every tenant is in memory')
  const ready = await adminRequest(adminPort, 'GET', '/readyz', null)
  t.equal(ready.status, 200)
  t.same(JSON.parse(ready.text), { status: 'ready' })
})
