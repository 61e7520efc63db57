/*
 * The walking skeleton over HTTP against a real server on a temporary data
 * directory: sign up → confirm → log in → create, read, list, update, $set
 * and delete a project; XML and JSONP; the error bodies.
 */
import t, { type Test } from 'tap'
import type { AnswerJson } from '../helpers/http.js'
import { startInProcess } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const { token } = await client.createTenant('acme')

const expectError = (t: Test, response: { status: number; json: AnswerJson }, status: number, code: string) => {
  t.equal(response.status, status, `status ${status}`)
  t.equal(response.json?.code, code, `code ${code}`)
  t.equal(response.json?.status, status, 'body status')
  t.type(response.json?.message, 'string', 'message')
  t.ok('description' in (response.json ?? {}), 'description present')
  t.ok('constraintViolation' in (response.json ?? {}), 'constraintViolation present')
}

t.test('project lifecycle', async (t) => {
  const created = await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, body: { name: 'Apollo', code: 'AP-1' } })
  t.equal(created.status, 201)
  t.match(created.json, { id: /^[0-9a-f-]{36}$/, version: 1 })
  const id = created.json.id as string

  const read = await client.request('GET', `/v1/time/projects/${id}`, { tenant: 'acme', query: { token } })
  t.equal(read.status, 200)
  t.match(read.json, { id, name: 'Apollo', code: 'AP-1', active: true, effective: true, displayName: 'Apollo', version: 1, trashItem: null })
  t.match(read.json.createdAt, /^\/Date\(\d+\)\/$/)
  t.match(read.json.owner, { firstName: 'Olive', lastName: 'Owner', displayName: 'Owner Olive' }, 'owner is embedded')
  t.notOk('externalSynced' in read.json, 'write-only fields are never shown')

  const stub = await client.request('GET', `/v1/time/projects/${id}`, { tenant: 'acme', query: { token, no_expand: true } })
  t.same(Object.keys(stub.json.owner).sort(), ['displayName', 'firstName', 'id', 'lastName', 'version'], 'no_expand gives a stub')

  const list = await client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token } })
  t.equal(list.status, 200)
  t.equal(list.json.length, 1)
  const alias = await client.request('GET', '/v1/projects/$count', { tenant: 'acme', query: { token } })
  t.equal(alias.text, '1')
  t.match(alias.headers['content-type'], /^text\/plain/)

  const stale = await client.request('PUT', `/v1/time/projects/${id}`, { tenant: 'acme', query: { token }, body: { name: 'Apollo 2', version: 0 } })
  expectError(t, stale, 409, 'TL01-1107')
  const missingVersion = await client.request('PUT', `/v1/time/projects/${id}`, { tenant: 'acme', query: { token }, body: { name: 'Apollo 2' } })
  expectError(t, missingVersion, 409, 'TL01-1107')
  const updated = await client.request('PUT', `/v1/time/projects/${id}`, {
    tenant: 'acme',
    query: { token, response_object: true },
    body: { name: 'Apollo 2', version: 1, createdAt: '/Date(0)/', displayName: 'ignored' },
  })
  t.equal(updated.status, 200)
  t.match(updated.json, { name: 'Apollo 2', version: 2, displayName: 'Apollo 2' })
  t.not(updated.json.createdAt, '/Date(0)/', 'read-only fields are ignored on input')
  const ignored = await client.request('PUT', `/v1/time/projects/${id}`, { tenant: 'acme', query: { token, version_ignore: true }, body: { note: 'n' } })
  t.same(ignored.json, { id, version: 3 })
  const set = await client.request('POST', `/v1/time/projects/${id}/$set`, { tenant: 'acme', query: { token, active: false, timeBudget: 3600000 } })
  t.equal(set.status, 200)
  t.match(set.json, { active: false, timeBudget: 3600000, version: 4 })
  const staleSet = await client.request('POST', `/v1/time/projects/${id}/$set`, { tenant: 'acme', query: { token, active: true, version: 1 } })
  expectError(t, staleSet, 409, 'TL01-1107')

  const overridden = await client.request('POST', `/v1/time/projects/${id}`, { tenant: 'acme', query: { token, method: 'PUT' }, body: { code: 'X', version: 4 } })
  t.same(overridden.json, { id, version: 5 }, 'method=PUT override')
  const staleIgnored = await client.request('PUT', `/v1/time/projects/${id}`, { tenant: 'acme', query: { token, version_ignore: true, response_object: true }, body: { note: 'over', version: 1 } })
  t.equal(staleIgnored.status, 200, 'version_ignore=true writes over a stale version')
  t.match(staleIgnored.json, { note: 'over', version: 6 })
  const staleSetIgnored = await client.request('POST', `/v1/time/projects/${id}/$set`, { tenant: 'acme', query: { token, note: 'n', version: 1, version_ignore: true } })
  t.match(staleSetIgnored.json, { note: 'n', version: 7 }, '$set with version_ignore=true too')

  const removed = await client.request('DELETE', `/v1/time/projects/${id}`, { tenant: 'acme', query: { token } })
  t.equal(removed.status, 200)
  expectError(t, await client.request('GET', `/v1/time/projects/${id}`, { tenant: 'acme', query: { token } }), 404, 'TL01-1101')
  const deleted = await client.request('GET', `/v1/time/projects/${id}/@deleted`, { tenant: 'acme', query: { token } })
  t.equal(deleted.status, 200)
  t.equal(deleted.json.name, 'Apollo 2')
  t.equal((await client.request('GET', '/v1/time/projects/$count', { tenant: 'acme', query: { token } })).text, '0')
})

t.test('validation and references', async (t) => {
  const tooLong = await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, body: { name: 'x', code: 'c'.repeat(21) } })
  expectError(t, tooLong, 412, 'TL01-1104')
  t.match(tooLong.json.constraintViolation, { entityType: 'Project', field: 'code', constraint: 'Size' })
  const badRef = await client.request('POST', '/v1/time/projects', {
    tenant: 'acme',
    query: { token },
    body: { name: 'x', client: { id: '00000000-0000-0000-0000-000000000000' } },
  })
  expectError(t, badRef, 412, 'TL01-1104')
  t.match(badRef.json.constraintViolation, { field: 'client', constraint: 'Reference' })
  const wrongType = await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, body: { name: 'x', active: 'yes' } })
  expectError(t, wrongType, 400, 'TL01-1105')
  const badId = await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, body: { id: 'NOT-A-UUID', name: 'x' } })
  expectError(t, badId, 412, 'TL01-1104')
  const clientId = '11111111-2222-4333-8444-555555555555'
  t.equal((await client.request('POST', '/v1/time/clients', { tenant: 'acme', query: { token }, body: { id: clientId, name: 'Client' } })).status, 201)
  const withClient = await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token, response_object: true }, body: { name: 'y', client: { id: clientId } } })
  t.equal(withClient.status, 201)
  t.match(withClient.json.client, { id: clientId, name: 'Client' })
  const taken = await client.request('POST', '/v1/time/clients', { tenant: 'acme', query: { token }, body: { id: clientId, name: 'Again' } })
  expectError(t, taken, 412, 'TL01-1104')
})

t.test('formats', async (t) => {
  const created = await client.request('POST', '/v1/time/projects', {
    tenant: 'acme',
    query: { token },
    rawBody: '<project><name>Xml &amp; Co</name><billable>true</billable><timeBudget>60000</timeBudget><begins>2024-03-01T10:00:00Z</begins></project>',
    headers: { 'content-type': 'application/xml' },
  })
  t.equal(created.status, 201, created.text)
  const id = created.json.id as string
  const xml = await client.request('GET', `/v1/time/projects/${id}`, { tenant: 'acme', query: { token, format: 'xml' } })
  t.match(xml.headers['content-type'], /application\/xml/)
  t.match(xml.text, /<project>.*<name>Xml &amp; Co<\/name>/s)
  t.match(xml.text, /<begins>2024-03-01T10:00:00.000Z<\/begins>/)
  const json = await client.request('GET', `/v1/time/projects/${id}`, { tenant: 'acme', query: { token } })
  t.match(json.json, { billable: true, timeBudget: 60000, begins: '/Date(1709287200000)/' })
  const list = await client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token }, headers: { accept: 'application/xml' } })
  t.match(list.text, /^<\?xml[^>]*><projects><project>/)
  const jsonp = await client.request('GET', `/v1/time/projects/${id}.json`, { tenant: 'acme', query: { token, callback: 'show' } })
  t.match(jsonp.headers['content-type'], /javascript/)
  t.match(jsonp.text, /^show\(\{.*\}\);$/s)
  const suppressed = await client.request('GET', '/v1/time/projects/nope.json', { tenant: 'acme', query: { token, callback: 'cb', suppress_response_code: true } })
  t.equal(suppressed.status, 200)
  t.match(suppressed.text, /^cb\(\{"status":404,"code":"TL01-1101"/)
  const metadata = await client.request('GET', '/v1/time/projects/$metadata', { tenant: 'acme', query: { token } })
  t.equal(metadata.json.type, 'Project')
  t.same(metadata.json.cascades, [{ cascadeType: 'REMOVE', objectTypes: ['TrashItem', 'ProjectMember', 'ProjectWorkTypeLink', 'TimeRecord', 'Impulse', 'Task'] }])
  t.match(
    metadata.json.fields.find((field: { name: string }) => field.name === 'code'),
    { type: 'String', access: 'READ_WRITE', constraints: [{ type: 'Size', details: 'min 0, max 20' }] },
  )
  t.match(
    metadata.json.fields.find((field: { name: string }) => field.name === 'client'),
    { type: 'Client', path: '/v1/time/clients' },
  )
  const dummy = await client.request('GET', '/v1/time/projects/$dummy', { tenant: 'acme', query: { token } })
  t.equal(dummy.status, 200)
  t.type(dummy.json.name, 'string')
  t.type(dummy.json.active, 'boolean')
  t.ok(dummy.json.code.length <= 20)
})

t.test('errors', async (t) => {
  expectError(t, await client.request('GET', '/v1/time/projects', { tenant: 'acme' }), 400, 'TL01-1002')
  expectError(t, await client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token: 'nonsense' } }), 401, 'TL01-1010')
  expectError(t, await client.request('GET', '/v1/time/projects', { tenant: 'nobody', query: { token } }), 401, 'TL01-1005')
  expectError(t, await client.request('GET', '/v1/time/projects/42', { tenant: 'acme', query: { token } }), 404, 'TL01-1101')
  expectError(t, await client.request('GET', '/v1/time/nothing', { tenant: 'acme', query: { token } }), 404, 'TL01-9003')
  expectError(t, await client.request('PATCH', '/v1/time/projects', { tenant: 'acme', query: { token } }), 405, 'TL01-9004')
  expectError(t, await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, rawBody: '{"name":' }), 400, 'TL01-1105')
  expectError(t, await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, rawBody: '[1,2]' }), 400, 'TL01-1105')
  const xmlBroken = await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, rawBody: '<project><name>x</project>', headers: { 'content-type': 'application/xml' } })
  expectError(t, xmlBroken, 400, 'TL01-1105')
  // Through HAProxy too: the node reads the rest of the body and throws it away (limitedBody.ts), so no reset.
  expectError(t, await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, rawBody: `{"name":"${'x'.repeat(1_100_000)}"}` }), 413, 'TL01-9006')
  expectError(t, await client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token, $top: 'ten' } }), 400, 'TL01-1105')
  expectError(t, await client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token, $orderby: 'nothing desc' } }), 400, 'TL01-1105')
  expectError(t, await client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token, append: 'bills-count' } }), 400, 'TL01-1105')
})

t.test('registration calls', async (t) => {
  const exists = await client.request('GET', '/v1/register/checkurl', { query: { url: 'acme', apikey: client.apiKey } })
  t.same(exists.json, { exists: true })
  const free = await client.request('GET', '/v1/register/checkurl', { query: { url: 'other', apikey: client.apiKey } })
  t.same(free.json, { exists: false })
  const email = await client.request('GET', '/v1/register/checkemail', { query: { email: 'OWNER@acme.test', apikey: client.apiKey } })
  t.same(email.json, { exists: true })
  expectError(t, await client.request('GET', '/v1/register/checkurl', { query: { url: 'acme', apikey: 'wrong' } }), 401, 'TL01-1001')
  const again = await client.request('POST', '/v1/register/signup', {
    query: { apikey: client.apiKey },
    body: { account: { name: 'Dup', urlPrefix: 'acme' }, owner: { email: 'x@y.test', password: 'long-enough' } },
  })
  expectError(t, again, 409, 'TL01-1102')
  const weak = await client.request('POST', '/v1/register/signup', {
    query: { apikey: client.apiKey },
    body: { account: { name: 'Weak', urlPrefix: 'weak' }, owner: { email: 'w@y.test', password: 'short' } },
  })
  expectError(t, weak, 412, 'TL01-1104')
  const badPrefix = await client.request('POST', '/v1/register/signup', {
    query: { apikey: client.apiKey },
    body: { account: { name: 'Bad', urlPrefix: '-bad-' }, owner: { email: 'b@y.test', password: 'long-enough' } },
  })
  expectError(t, badPrefix, 412, 'TL01-1104')
  const signup = await client.request('POST', '/v1/register/signup', {
    query: { apikey: client.apiKey },
    body: { account: { name: 'Beta', urlPrefix: 'beta' }, owner: { email: 'b@beta.test', password: 'long-enough' } },
  })
  t.equal(signup.status, 201)
  const unconfirmed = await client.request('GET', '/v1/auth/login', {
    tenant: 'beta',
    query: { apikey: client.apiKey },
    headers: { authorization: `Basic ${Buffer.from('b@beta.test:long-enough').toString('base64')}` },
  })
  expectError(t, unconfirmed, 401, 'TL01-1007')
  expectError(t, await client.request('POST', '/v1/auth/confirm/not-the-id', { tenant: 'beta', query: { apikey: client.apiKey } }), 400, 'TL01-1006')
  t.equal((await client.request('POST', `/v1/auth/confirm/${signup.json.id}`, { tenant: 'beta', query: { apikey: client.apiKey } })).status, 200)
  const wrongPassword = await client.request('GET', '/v1/auth/login', {
    tenant: 'beta',
    query: { apikey: client.apiKey },
    headers: { authorization: `Basic ${Buffer.from('b@beta.test:wrong-password').toString('base64')}` },
  })
  expectError(t, wrongPassword, 401, 'TL01-1001')
  const betaToken = await client.login('beta', 'b@beta.test', 'long-enough')
  expectError(t, await client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token: betaToken } }), 401, 'TL01-1010')
})

t.test('tokens: refresh works once, logout ends the token', async (t) => {
  const login = await client.request('GET', '/v1/auth/login', {
    tenant: 'acme',
    query: { apikey: client.apiKey },
    headers: { authorization: `Basic ${Buffer.from('owner@acme.test:secret-password').toString('base64')}` },
  })
  t.match(login.json, { token: String, refreshToken: String, expiration: /^\/Date\(\d+\)\/$/, refreshExpiration: /^\/Date\(\d+\)\/$/ })
  const refreshed = await client.request('GET', '/v1/auth/refreshtoken', { tenant: 'acme', query: { apikey: client.apiKey, refresh_token: login.json.refreshToken } })
  t.equal(refreshed.status, 200)
  const again = await client.request('GET', '/v1/auth/refreshtoken', { tenant: 'acme', query: { apikey: client.apiKey, refresh_token: login.json.refreshToken } })
  expectError(t, again, 401, 'TL01-1011')
  const bearer = await client.request('GET', '/v1/time/projects/$count', { tenant: 'acme', headers: { authorization: `Bearer ${refreshed.json.token}` } })
  t.equal(bearer.status, 200)
  t.equal((await client.request('GET', '/v1/auth/logout', { tenant: 'acme', query: { token: refreshed.json.token } })).status, 200)
  expectError(t, await client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token: refreshed.json.token } }), 401, 'TL01-1010')
})
