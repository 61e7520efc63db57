/*
 * The OpenAPI description (`/v1/openapi.json`): served without a token on
 * the public and tenant addresses, valid OpenAPI 3.1 by a maintained
 * validator, complete (every route of the route table, every declared
 * resource path and alias, every view, action and inner collection), and
 * true: real answers of the service match the response schemas the
 * description gives for their operation and status (checked with ajv,
 * JSON Schema draft 2020-12, as OpenAPI 3.1 uses it). Also the entry page
 * `GET /` and the reference's page and assets.
 */
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import t, { type Test } from 'tap'
import { RESOURCES } from '../../src/domain/resources/index.js'
import { buildOpenApiDocument } from '../../src/http/openapi/openApiDocument.js'
import { ROUTES } from '../../src/http/routeTable.js'
import { actionKeys } from '../../src/http/routes/actions.js'
import { viewNamesOf } from '../../src/http/routes/views.js'
import type { AnswerJson, TestResponse } from '../helpers/http.js'
import { startInProcess } from '../helpers/server.js'

// ajv-formats is CommonJS: its default export is the plugin (under `default` once more when loaded as ESM).
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const { token } = await client.createTenant('acme')

type Json = Record<string, AnswerJson>

const served = await client.request('GET', '/v1/openapi.json')
const doc = served.json as Json

t.test('the description is served without a token, on the public and the tenant addresses', async (t) => {
  t.equal(served.status, 200)
  t.match(served.headers['content-type'], /^application\/json/)
  t.equal(doc.openapi, '3.1.0')
  const onTenant = await client.request('GET', '/v1/openapi.json', { tenant: 'acme' })
  t.equal(onTenant.status, 200)
  const withoutServers = (document: Json) => ({ ...document, servers: null })
  t.same(withoutServers(onTenant.json), withoutServers(doc), 'the same document, but for the order of its servers (test/api/tenantPath.test.ts)')
  t.same(new Set(onTenant.json.servers.map((server: Json) => server.url)), new Set(['/v1', ...doc.servers.map((server: Json) => server.url)]), "a tenant's host adds its own /v1")
  const again = await client.request('GET', '/v1/openapi.json')
  t.equal(again.text, served.text, 'built once: the same text every time')
})

t.test('a maintained validator finds it valid OpenAPI 3.1', async (t) => {
  const result = await new Validator().validate(structuredClone(doc))
  t.equal(result.valid, true, JSON.stringify(result.errors ?? null).slice(0, 2000))
})

/** The document's path of a route pattern: `:name` → `{name}`. */
function documented(pattern: string): string {
  return `/${pattern.replace(/:(\w+)/g, '{$1}')}`
}

t.test('every route of the route table is described', async (t) => {
  for (const route of ROUTES) {
    const method = route.method.toLowerCase()
    if (route.pattern === 'time/reports/:name') {
      for (const name of ['readtotals', 'groupedtotals', 'singletotals', 'trendedtotals', 'singleslices']) t.ok(doc.paths[`/time/reports/${name}`]?.[method], `report ${name}`)
      continue
    }
    const path = route.pattern === 'openapi' ? '/openapi.json' : documented(route.pattern)
    t.ok(doc.paths[path]?.[method], `${route.method} ${path}`)
    if (route.scope === 'public' && !ROUTES.some((other) => other.scope === 'tenant' && other.pattern === route.pattern && other.method === route.method)) {
      t.ok(doc.paths[path][method].servers?.[0]?.url.endsWith('/v1'), `${path} names the public URL as its server`)
    }
  }
})

t.test('every declared resource path and alias, view, action and inner collection is described', async (t) => {
  for (const decl of RESOURCES) {
    if (decl.internal || decl.path === null) continue
    for (const alias of decl.aliases) {
      // An alias is described once (issue 38): its list, naming the path everything below it is described under.
      t.match(doc.paths[`/${alias}`]?.get?.description, new RegExp(`\`/${alias}\` is another name of \`/${decl.path}\``), `GET /${alias}, an alias of /${decl.path}`)
      t.notOk(
        Object.keys(doc.paths).some((path) => path.startsWith(`/${alias}/`)),
        `nothing below /${alias} is described again`,
      )
    }
    for (const path of [decl.path]) {
      t.ok(doc.paths[`/${path}`]?.get, `GET /${path}`)
      t.equal(Boolean(doc.paths[`/${path}`]?.post), decl.creatable || decl.type === 'SecretKey', `POST /${path} exactly when creatable`)
      t.ok(doc.paths[`/${path}/{id}`]?.get, `GET /${path}/{id}`)
      t.equal(Boolean(doc.paths[`/${path}/{id}`]?.put), decl.updatable, `PUT /${path}/{id} exactly when updatable`)
      t.equal(Boolean(doc.paths[`/${path}/{id}`]?.patch), decl.updatable, `PATCH /${path}/{id} exactly when updatable`)
      for (const tail of ['$count', '$metadata', '$dummy', 'summary', '@deleted']) t.ok(doc.paths[`/${path}/${tail}`]?.get, `GET /${path}/${tail}`)
      for (const view of viewNamesOf(decl.type)) t.ok(doc.paths[`/${path}/${view}`]?.get, `view ${path}/${view}`)
      for (const inner of decl.inner) t.ok(doc.paths[`/${path}/{parentId}/${inner.name}`]?.get, `inner collection ${path}/{parentId}/${inner.name}`)
      t.ok(doc.paths[`/${path}/{id}`].get.tags.includes(decl.type), 'tagged with the type')
    }
  }
  for (const key of actionKeys()) {
    const [type, name] = key.split(':') as [string, string]
    if (!name.startsWith('$')) continue
    const decl = RESOURCES.find((candidate) => candidate.type === type)
    const found = Object.keys(doc.paths).some((path) => path.startsWith(`/${decl?.path}/`) && path.endsWith(`/${name}`))
    t.ok(found, `action ${key}`)
  }
})

t.test('security schemes: token in the query, Bearer, the API key, Basic for login, the calendar secret for the feed', async (t) => {
  const schemes = doc.components.securitySchemes
  t.match(schemes.token, { type: 'apiKey', in: 'query', name: 'token' })
  t.match(schemes.bearer, { type: 'http', scheme: 'bearer' })
  t.match(schemes.apikey, { type: 'apiKey', in: 'query', name: 'apikey' })
  t.match(schemes.basic, { type: 'http', scheme: 'basic' })
  t.same(doc.paths['/auth/login'].get.security[0], { apikey: [], basic: [] })
  t.same(doc.paths['/openapi.json'].get.security, [{}], 'the description needs no credentials')
  t.match(schemes.calendarSecret, { type: 'apiKey', in: 'query', name: 'secret' })
  t.same(doc.paths['/users/@self/calendar.ics'].get.security, [{ token: [] }, { bearer: [] }, { calendarSecret: [] }], 'the feed: a token, or the calendar secret')
  t.same(doc.paths['/users/@self/calendar/secret'].post.security, [{ token: [] }, { bearer: [] }], 'the secret is made with a token only')
  const listParameters = doc.paths['/time/projects'].get.parameters.map((parameter: Json) => parameter.$ref ?? parameter.name)
  for (const name of ['filter', 'orderby', 'top', 'skip', 'no_expand', 'format']) t.ok(listParameters.includes(`#/components/parameters/${name}`), `list takes ${name}`)
  t.ok(listParameters.includes('append'), 'projects take append')
  t.match(doc.components.schemas.Error.properties.code.enum, ['TL01-1001'], 'error codes from the catalogue')
})

t.test('the HTTP conventions are described: ETag and 304, If-Match, $inlinecount, X-Total-Count, Link, rate-limit headers', async (t) => {
  const list = doc.paths['/time/projects'].get
  const names = (operation: { parameters: { $ref?: string; name?: string }[] }) =>
    operation.parameters.map((parameter) => parameter.name ?? doc.components.parameters[(parameter.$ref as string).split('/').pop() as string].name)
  t.ok(names(list).includes('$inlinecount'), 'a list takes $inlinecount')
  t.ok(names(list).includes('If-None-Match'), 'and If-None-Match')
  t.same(Object.keys(list.responses['200'].headers).sort(), ['ETag', 'Link', 'X-Total-Count'], 'a page names its headers')
  t.ok(list.responses['304'], 'and its 304')
  const item = doc.paths['/time/projects/{id}']
  t.ok(names(item.get).includes('If-None-Match') && item.get.responses['304'], 'an object: If-None-Match and 304')
  t.ok(names(item.put).includes('If-Match') && names(item.delete).includes('If-Match'), 'If-Match on PUT and DELETE')
  for (const header of ['ETag', 'X-Total-Count', 'Link', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'X-Request-Id']) {
    t.ok(doc.components.headers[header], `components.headers.${header}`)
  }
})

t.test('the description cannot drift from the route table', async (t) => {
  const unknownRoute = { method: 'GET', scope: 'tenant' as const, pattern: 'undescribed/route', auth: true }
  t.throws(() => buildOpenApiDocument(server.service.services, [...ROUTES, unknownRoute]), /GET undescribed\/route has no description/)
  t.throws(() => buildOpenApiDocument(server.service.services, ROUTES.slice(1)), /names no route/, 'a description without its route')
})

// Real answers against the schemas of their operations.

const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)

/** The document's operation for a concrete path: the templated path whose literal segments match, most literal first. */
function operationFor(method: string, concretePath: string): Json {
  const segments = concretePath.split('/')
  const candidates = Object.keys(doc.paths).filter((path) => {
    const parts = path.split('/')
    return parts.length === segments.length && parts.every((part, index) => part.startsWith('{') || part === segments[index])
  })
  candidates.sort((a, b) => b.split('/').filter((part) => !part.startsWith('{')).length - a.split('/').filter((part) => !part.startsWith('{')).length)
  const operation = candidates.map((path) => doc.paths[path][method.toLowerCase()]).find((found) => found !== undefined)
  if (operation === undefined) throw new Error(`no operation ${method} ${concretePath}`)
  return operation
}

function responseSchemaFor(method: string, path: string, status: number, contentType: string): Json {
  const responses = operationFor(method, path).responses
  let answer = responses[String(status)] ?? responses[`${String(status)[0]}XX`]
  if (answer === undefined) throw new Error(`${method} ${path} documents no answer ${status}`)
  if (answer.$ref !== undefined) answer = doc.components.responses[answer.$ref.split('/').at(-1)]
  const content = answer.content[contentType] ?? answer.content['*/*']
  if (content === undefined) throw new Error(`${method} ${path} ${status} documents no ${contentType}`)
  return content.schema
}

function expectMatches(t: Test, method: string, path: string, response: TestResponse): void {
  const contentType = String(response.headers['content-type'] ?? '').split(';')[0] as string
  const schema = responseSchemaFor(method, path, response.status, contentType)
  const validate = ajv.compile({ ...schema, components: doc.components })
  const body = contentType === 'application/json' ? response.json : response.text
  const valid = validate(body)
  t.ok(valid, `${method} ${path} → ${response.status} matches its schema ${valid ? '' : JSON.stringify(validate.errors).slice(0, 1500)}`)
}

t.test('real answers match their response schemas', async (t) => {
  const call = async (method: string, path: string, options: Parameters<typeof client.request>[2] = {}, expected?: number) => {
    const response = await client.request(method, `/v1${path}`, { tenant: 'acme', ...options, query: { token, ...options.query } })
    if (expected !== undefined) t.equal(response.status, expected, `${method} ${path} answers ${expected}: ${response.text.slice(0, 300)}`)
    expectMatches(t, method, path, response)
    return response
  }
  const self = await call('GET', '/users/@self', {}, 200)
  const client1 = await call('POST', '/time/clients', { body: { name: 'Client One', countryCode: 'DEU' }, query: { response_object: true } }, 201)
  const project = await call('POST', '/time/projects', { body: { name: 'Apollo', client: { id: client1.json.id }, timeBudget: 3_600_000 } }, 201)
  const projectId = project.json.id as string
  await call('GET', `/time/projects/${projectId}`, {}, 200)
  await call('GET', `/time/projects/${projectId}`, { query: { no_expand: true } }, 200)
  await call('PUT', `/time/projects/${projectId}`, { body: { note: 'first', version: project.json.version }, query: { response_object: true } }, 200)
  await call('POST', `/time/projects/${projectId}/$set`, { query: { code: 'AP' } }, 200)
  const start = Date.UTC(2025, 0, 15, 9)
  await call(
    'POST',
    '/time/timerecords',
    { body: { user: { id: self.json.id }, project: { id: projectId }, start: `/Date(${start})/`, stop: `/Date(${start + 5_400_000})/`, duration: 5_400_000, billable: true } },
    201,
  )
  await call('POST', '/time/tasks', { body: { name: 'Design', project: { id: projectId } } }, 201)
  await call('GET', '/time/projects', { query: { append: 'timerecords-count,tasks-count' } }, 200)
  await call('GET', '/time/timerecords', { query: { $filter: `project/id eq '${projectId}'`, $orderby: 'start desc' } }, 200)
  await call('GET', `/time/projects/${projectId}/tasks`, {}, 200)
  await call('GET', '/time/projects/@own', {}, 200)
  await call('GET', '/time/projects/$count', {}, 200)
  await call('GET', '/time/projects/$metadata', {}, 200)
  await call('GET', '/time/timerecords/summary', { query: { summary: 'project/id;count();sum(duration)' } }, 200)
  await call('GET', '/time/reports/readtotals', { query: { summary: 'project/id' } }, 200)
  await call('GET', '/time/reports/groupedtotals', { query: { summary: 'project/id' } }, 200)
  await call('GET', '/time/reports/singletotals', { query: { range: 31, range_from: '2025-01-01' } }, 200)
  await call('GET', '/time/reports/trendedtotals', { query: { range: 31, range_from: '2025-01-01', depth: 2 } }, 200)
  await call('GET', '/time/reports/singleslices', { query: { range: 31, range_from: '2025-01-01', slice_by: 7 } }, 200)
  await call('GET', '/accounts/@own', {}, 200)
  await call('GET', '/users', {}, 200)
  await call('POST', '/time/timerecords/$calculateprice', { body: { user: { id: self.json.id }, duration: 3_600_000 } }, 200)
  const task = await call('POST', '/time/tasks', { body: { name: 'Doomed' } }, 201)
  await call('DELETE', `/time/tasks/${task.json.id}`, {}, 200)
  const trashed = await call('GET', '/time/tasks/@deleted', {}, 200)
  await call('GET', `/trash/${trashed.json[0].trashItem.id}/$restore`, {}, 200)
  await call('POST', `/time/projects/${projectId}/$deactivate`, {}, 200)
  await call('GET', '/billing/bills/$getNextDocNumber', {}, 200)
  await call('GET', '/time/timerecords/$unbilled', {}, 200)
  await call('GET', '/time/timerecords/$unbilledsummary', {}, 200)
  await call('GET', `/users/${self.json.id}/projects`, {}, 200)
  await call('GET', `/time/projects/${projectId}/members/$metadata`, {}, 200)
  const impulse = await call('POST', '/time/impulses', { body: { user: { id: self.json.id }, mode: 'STOPWATCH', start: `/Date(${Date.now() - 60_000})/` } }, 201)
  await call('POST', `/time/impulses/${impulse.json.id}/$stop`, {}, 200)
  await call('GET', '/time/impulses/@stopwatch', {}, 200)
  // Errors: a missing object, a bad filter, a stale version, a constraint violation, a path typo.
  await call('GET', '/time/projects/00000000-0000-0000-0000-000000000000', {}, 404)
  await call('GET', '/time/projects', { query: { $filter: 'name eq' } }, 400)
  await call('PUT', `/time/projects/${projectId}`, { body: { note: 'stale', version: 1 } }, 409)
  await call('POST', '/time/projects', { body: { name: 'Too long a code', code: 'x'.repeat(30) } }, 412)
  await call('GET', '/users/@self/accesstokens', {}, 200)
  await call('GET', '/accesses/product/TIME/$free', {}, 200)
  await call(
    'POST',
    '/users/@self/signature/upload',
    { rawBody: Buffer.from('89504e470d0a1a0a', 'hex'), headers: { 'content-type': 'image/png' }, query: { filename: 'sig.png', response_object: true } },
    201,
  )
  await call('GET', '/users/@self/signature', {}, 200)
  await call('GET', '/users/@self/signature/download', {}, 200)
  await call('GET', '/users/@self/accesses/product/TIME/$free', {}, 200)
  await call('GET', '/accesses/products/$allowed', {}, 200)
  await call('POST', '/users/@self/secretkeys', { body: { name: 'ci' } }, 201)
  await call('GET', '/users/@self/secretkeys', {}, 200)
  await call('POST', '/storage/settings/theme', { rawBody: 'dark', headers: { 'content-type': 'text/plain' } }, 201)
  await call('GET', '/storage/settings', {}, 200)
  await call('POST', '/batch', { body: [{ id: 'a', method: 'GET', path: '/v1/time/projects?$top=1' }] }, 200)
  await call('GET', '/time/projects/$dummy', {}, 200)
  const csv = { rawBody: 'Email,Project,Start date,Start time,Duration\nowner@acme.test,Imported,2025-03-03,09:00:00,01:30:00\n', headers: { 'content-type': 'text/csv' } }
  await call('POST', '/import/toggl', { ...csv, query: { dry_run: true } }, 200)
  await call('POST', '/import/toggl', csv, 201)
  await call('POST', '/import/toggl', { ...csv, rawBody: 'Email\nowner@acme.test\n' }, 400)
  const calendarSecret = await call('POST', '/users/@self/calendar/secret', {}, 201)
  await call('GET', '/users/@self/calendar/secret', {}, 200)
  await call('GET', '/users/@self/calendar.ics', { query: { from: '2025-03-01', to: '2025-03-31' } }, 200)
  await call('GET', '/users/@self/calendar.ics', { query: { token: '', secret: calendarSecret.json.secret } }, 200)
  await call('DELETE', '/users/@self/calendar/secret', {}, 200)
  const login = await client.request('GET', '/v1/auth/login', {
    tenant: 'acme',
    query: { apikey: client.apiKey },
    headers: { authorization: `Basic ${Buffer.from('owner@acme.test:secret-password').toString('base64')}` },
  })
  expectMatches(t, 'GET', '/auth/login', login)
  const checkurl = await client.request('GET', '/v1/register/checkurl', { query: { apikey: client.apiKey, url: 'acme' } })
  expectMatches(t, 'GET', '/register/checkurl', checkurl)
  const findurl = await client.request('GET', '/v1/register/findurl', { query: { apikey: client.apiKey, email: 'owner@acme.test' } })
  expectMatches(t, 'GET', '/register/findurl', findurl)
  const refreshed = await client.request('GET', '/v1/auth/refreshtoken', { tenant: 'acme', query: { apikey: client.apiKey, refresh_token: login.json.refreshToken } })
  t.equal(refreshed.status, 200)
  expectMatches(t, 'GET', '/auth/refreshtoken', refreshed)
  const signup = await client.request('POST', '/v1/register/signup', {
    query: { apikey: client.apiKey },
    body: { account: { name: 'Beta Ltd', urlPrefix: 'beta' }, owner: { firstName: 'Bea', lastName: 'Beta', email: 'bea@beta.test', password: 'secret-password' } },
  })
  t.equal(signup.status, 201)
  expectMatches(t, 'POST', '/register/signup', signup)
  const confirmed = await client.request('POST', `/v1/auth/confirm/${signup.json.id}`, { tenant: 'beta', query: { apikey: client.apiKey } })
  t.equal(confirmed.status, 200)
  expectMatches(t, 'POST', '/auth/confirm/{id}', confirmed)
  // The check can fail: a project whose date is not `/Date(ms)/`, or with a field the schema does not name, does not match.
  const projectSchema = ajv.compile({ ...responseSchemaFor('GET', `/time/projects/${projectId}`, 200, 'application/json'), components: doc.components })
  const shown = (await client.request('GET', `/v1/time/projects/${projectId}`, { tenant: 'acme', query: { token } })).json
  t.ok(projectSchema(shown), 'the project as shown matches')
  t.notOk(projectSchema({ ...shown, createdAt: '2025-01-01' }), 'a date in another form does not')
  t.notOk(projectSchema({ ...shown, surprise: 1 }), 'an undescribed field does not')
  const noToken = await client.request('GET', '/v1/time/projects', { tenant: 'acme' })
  t.equal(noToken.status, 400)
  expectMatches(t, 'GET', '/time/projects', noToken)
})

t.test('GET / points to the reference and the description', async (t) => {
  const index = await client.request('GET', '/')
  t.equal(index.status, 200)
  t.match(index.json, { documentation: '/docs', openapi: '/v1/openapi.json' })
  const html = await client.request('GET', '/', { headers: { accept: 'text/html,application/xhtml+xml' } })
  t.match(html.headers['content-type'], /^text\/html/)
  t.match(html.text, /href="\/docs"/)
  t.match(html.text, /href="\/v1\/openapi.json"/)
  const unknown = await client.request('GET', '/nowhere')
  t.equal(unknown.status, 404, 'other paths outside /v1 are still not found')
})

t.test('the reference page and its assets come from this server', async (t) => {
  const page = await client.request('GET', '/docs')
  t.equal(page.status, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.notMatch(page.text, /https?:\/\//, 'nothing loaded from elsewhere')
  for (const asset of page.text.matchAll(/(?:src|href)="([^"]+)"/g)) {
    const response = await client.request('GET', asset[1] as string)
    t.equal(response.status, 200, `${asset[1]} served`)
    t.ok(response.body.length > 0)
  }
  const initializer = await client.request('GET', '/docs/assets/initializer.js')
  t.match(initializer.text, /\/v1\/openapi\.json/)
  t.match(initializer.text, /validatorUrl: null/)
  const bundle = await client.request('GET', '/docs/assets/swagger-ui-bundle.js')
  t.match(bundle.headers['content-type'], /^text\/javascript/)
  t.equal((await client.request('GET', '/docs/assets/package.json')).status, 404, 'only the page’s files')
  t.equal((await client.request('GET', '/docs/assets/..%2Fpackage.json')).status, 404)
  t.equal((await client.request('GET', '/docs', { tenant: 'acme' })).status, 200, 'on a tenant’s address too')
})

t.test('the pages forbid framing and everything they do not load themselves', async (t) => {
  for (const [label, response] of [
    ['/docs', await client.request('GET', '/docs')],
    ['/docs on a tenant', await client.request('GET', '/docs', { tenant: 'acme' })],
    ['/ as HTML', await client.request('GET', '/', { headers: { accept: 'text/html' } })],
  ] as const) {
    const policy = String(response.headers['content-security-policy'])
    for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"]) {
      t.ok(policy.split('; ').includes(directive), `${label}: ${directive}`)
    }
    t.notMatch(policy, /unsafe-inline|unsafe-eval/, `${label}: no inline script or eval`)
    t.equal(response.headers['x-frame-options'], 'DENY', `${label}: X-Frame-Options`)
  }
})

t.test('Idempotency-Key on every signed-in write, Idempotent-Replayed on their answers', async (t) => {
  const keyed: string[] = []
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const refs = ((operation.parameters ?? []) as { $ref?: string }[]).map((parameter) => parameter.$ref)
      if (refs.includes('#/components/parameters/idempotencyKey')) keyed.push(`${method.toUpperCase()} ${path}`)
    }
  }
  for (const write of ['POST /time/projects', 'PUT /time/projects/{id}', 'PATCH /time/projects/{id}', 'DELETE /time/projects/{id}', 'POST /time/projects/{id}/$set', 'POST /batch']) {
    t.ok(keyed.includes(write), `${write} takes an Idempotency-Key`)
  }
  for (const refusing of ['GET /time/projects', 'POST /register/signup', 'POST /users/{id}/signature/upload', 'DELETE /users/{id}/signature']) {
    t.notOk(keyed.includes(refusing), `${refusing} takes none`)
  }
  t.match(doc.components.parameters.idempotencyKey, { name: 'Idempotency-Key', in: 'header', schema: { maxLength: 255 } })
  t.ok(doc.paths['/time/projects'].post.responses['201'].headers['Idempotent-Replayed'], 'a create names the replay header')
  t.ok(doc.components.headers['Idempotent-Replayed'])
})
