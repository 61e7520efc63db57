/*
 * Dates in JSON answers as ISO 8601 text on request (issue 38;
 * http/jsonDates.ts): `/Date(ms)/` stays the default, `dates=iso` or
 * `Accept: application/json; dates=iso` gives ISO text (the same instant)
 * in every JSON answer that carries dates — objects with their embedded
 * references, lists (also after their rows were kept as JSON text for the
 * default form), views, writes with response_object, PATCH, `$set`,
 * actions, tokens, sessions, `$dummy`, JSONP, batch items and the change
 * feed's events — with the type saying `dates=iso` and tags of its own; a
 * `dates` naming no form is 400 before anything is written. The OpenAPI
 * description names the option.
 */
import t, { type Test } from 'tap'
import { api, ref } from '../helpers/api.js'
import { openWebSocketFeed } from '../helpers/changeFeed.js'
import { expectError } from '../helpers/identity.js'
import { startInProcess, TEST_API_KEY } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const tenant = 'isodates'
const created = await client.createTenant(tenant)
const owner = api(client, tenant, created.token)
const me = (await owner.get('users/@self')).json.id as string
const ISO_ACCEPT = { accept: 'application/json; dates=iso' }

const MS_DATE = /^\/Date\((-?\d+)\)\/$/
const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const msOf = (text: string) => Number(MS_DATE.exec(text)?.[1])

/** Every string in `value` that looks like a date, in either form. */
function datesIn(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string' && (MS_DATE.test(value) || ISO_DATE.test(value))) found.push(value)
  else if (Array.isArray(value)) for (const item of value) datesIn(item, found)
  else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) datesIn(item, found)
  return found
}

/** The answer has dates, all of them ISO text. */
function allIso(t: Test, value: unknown, label: string): void {
  const dates = datesIn(value)
  t.ok(dates.length > 0, `${label}: has dates`)
  t.same(
    dates.filter((date) => !ISO_DATE.test(date)),
    [],
    `${label}: every date ISO 8601`,
  )
}

const project = await owner.create('time/projects', { name: 'Dated', begins: '2025-03-01T09:00:00Z' })
const record = await owner.create('time/timerecords', { user: ref(me), project: ref(project), start: '2025-03-03T09:00:00Z', duration: 3_600_000 })

t.test('the default stays /Date(ms)/; dates=iso and the Accept parameter give the same instants as ISO text', async (t) => {
  const plain = await owner.get(`time/timerecords/${record}`)
  t.equal(plain.json.start, `/Date(${Date.parse('2025-03-03T09:00:00Z')})/`)
  t.match(plain.headers['content-type'], /^application\/json; charset=utf-8$/)
  for (const [label, answer] of [
    ['dates=iso', await owner.get(`time/timerecords/${record}`, { dates: 'iso' })],
    ['Accept', await owner.call('GET', `time/timerecords/${record}`, { headers: ISO_ACCEPT })],
  ] as const) {
    t.equal(answer.status, 200, answer.text)
    t.equal(answer.json.start, '2025-03-03T09:00:00.000Z', `${label}: the start`)
    t.equal(Date.parse(answer.json.createdAt), msOf(plain.json.createdAt), `${label}: the same instant`)
    t.equal(answer.json.project.begins, '2025-03-01T09:00:00.000Z', `${label}: an embedded reference's dates too`)
    allIso(t, answer.json, label)
    t.match(answer.headers['content-type'], /^application\/json; charset=utf-8; dates=iso$/, `${label}: the type says so`)
    t.not(answer.headers.etag, plain.headers.etag, `${label}: a tag of its own`)
  }
  const explicit = await owner.get(`time/timerecords/${record}`, { dates: 'ms' })
  t.equal(explicit.text, plain.text, 'dates=ms is the default')
  const queryWins = await owner.call('GET', `time/timerecords/${record}`, { query: { dates: 'ms' }, headers: ISO_ACCEPT })
  t.equal(queryWins.json.start, plain.json.start, 'the query option wins over Accept')
})

t.test('lists, also once their rows are kept as JSON text for the default form', async (t) => {
  for (let round = 0; round < 3; round += 1) t.match((await owner.get('time/timerecords')).json[0].start, MS_DATE, 'the default list, kept')
  for (let round = 0; round < 3; round += 1) t.match((await owner.get(`time/timerecords/${record}`)).json.start, MS_DATE, 'the object, kept')
  allIso(t, (await owner.get('time/timerecords', { dates: 'iso' })).json, 'the list')
  allIso(t, (await owner.get(`time/timerecords/${record}`, { dates: 'iso' })).json, 'the object read again')
  allIso(t, (await owner.call('GET', 'time/projects/@own', { headers: ISO_ACCEPT })).json, 'a view')
  allIso(t, (await owner.get(`time/projects/${project}/timerecords`, { dates: 'iso', no_expand: true })).json, 'an inner collection with stubs')
  t.match((await owner.get('time/timerecords')).json[0].start, MS_DATE, 'and the default list after them')
  const weak = (await owner.get('time/timerecords')).headers.etag as string
  const conditional = await owner.call('GET', 'time/timerecords', { headers: { ...ISO_ACCEPT, 'if-none-match': weak } })
  t.equal(conditional.status, 200, "the default list's tag is not the ISO list's")
})

t.test('writes, actions and other answers', async (t) => {
  const posted = await owner.post('time/timerecords', { user: ref(me), start: '2025-03-04T09:00:00Z', stop: '2025-03-04T10:00:00Z' }, { response_object: true, dates: 'iso' })
  t.equal(posted.status, 201, posted.text)
  allIso(t, posted.json, 'POST with response_object')
  const put = await owner.put(`time/timerecords/${posted.json.id}`, { description: 'put', version: 1 }, { response_object: true, dates: 'iso' })
  allIso(t, put.json, 'PUT')
  const patched = await owner.call('PATCH', `time/timerecords/${posted.json.id}`, {
    rawBody: JSON.stringify({ description: 'patched', version: 2 }),
    query: { response_object: true },
    headers: ISO_ACCEPT,
  })
  allIso(t, patched.json, 'PATCH')
  allIso(t, (await owner.post(`time/timerecords/${posted.json.id}/$set`, undefined, { description: 'set', dates: 'iso' })).json, '$set')
  const impulse = await owner.create('time/impulses', {})
  allIso(t, (await owner.get(`time/impulses/${impulse}/$stop`, { dates: 'iso' })).json, 'an action ($stop)')
  allIso(t, (await owner.get('time/timerecords/$dummy', { dates: 'iso' })).json, '$dummy')
  allIso(t, (await owner.get('users/@self/accesstokens', { dates: 'iso' })).json, 'the sessions')
  const login = await client.request('GET', '/v1/auth/login', {
    tenant,
    query: { apikey: TEST_API_KEY, dates: 'iso' },
    headers: { authorization: `Basic ${Buffer.from(`${created.email}:${created.password}`).toString('base64')}` },
  })
  t.equal(login.status, 200, login.text)
  allIso(t, login.json, 'a login’s token pair')
  const jsonp = await owner.get(`time/timerecords/${record}.json`, { callback: 'show', dates: 'iso' })
  t.match(jsonp.text, /^show\(\{.*"start":"2025-03-03T09:00:00\.000Z".*\}\);$/s, 'JSONP')
  t.match((await owner.get('time/reports/singletotals', { dates: 'iso' })).json, { count: Number }, 'an answer without dates is as it was')
})

t.test('a dates option naming no form is refused before anything is written', async (t) => {
  const before = (await owner.get('time/projects')).json.length
  expectError(t, await owner.post('time/projects', { name: 'not written' }, { dates: 'Iso8601' }), 400, 'TL01-1105', 'a POST')
  t.equal((await owner.get('time/projects')).json.length, before, 'nothing was written')
  expectError(t, await owner.get(`time/timerecords/${record}`, { dates: 'yes' }), 400, 'TL01-1105', 'a GET')
})

t.test('batch items take the batch’s dates, or their own', async (t) => {
  const batch = await client.request('POST', '/v1/batch', {
    tenant,
    query: { token: created.token, dates: 'iso' },
    body: [
      { id: 'iso', method: 'GET', path: `/v1/time/timerecords/${record}` },
      { id: 'ms', method: 'GET', path: `/v1/time/timerecords/${record}?dates=ms` },
    ],
  })
  t.equal(batch.status, 200, batch.text)
  const [iso, ms] = batch.json as { body: string; headers: string }[]
  allIso(t, JSON.parse(iso?.body ?? 'null'), 'an item without its own')
  t.match(iso?.headers, /dates=iso/)
  t.match(JSON.parse(ms?.body ?? 'null').start, MS_DATE, 'an item naming dates=ms')
  const byAccept = await client.request('POST', '/v1/batch', { tenant, query: { token: created.token }, headers: ISO_ACCEPT, body: [{ id: 'a', method: 'GET', path: '/v1/time/timerecords' }] })
  allIso(t, JSON.parse((byAccept.json as { body: string }[])[0]?.body ?? 'null'), "an item without headers takes the batch's Accept")
})

t.test('the change feed’s events with dates=iso', async (t) => {
  const iso = await openWebSocketFeed(client.port, tenant, created.token, { resources: 'time/projects', dates: 'iso' })
  const plain = await openWebSocketFeed(client.port, tenant, created.token, { resources: 'time/projects' })
  t.teardown(() => {
    iso.close()
    plain.close()
  })
  await owner.create('time/projects', { name: 'Felt', begins: '2025-04-01T00:00:00Z' })
  const [isoEvent] = await iso.waitFor(1)
  const [plainEvent] = await plain.waitFor(1)
  t.match(isoEvent?.at, ISO_DATE, 'the event’s time')
  t.equal(Date.parse(isoEvent?.at ?? ''), msOf(plainEvent?.at ?? ''), 'the same instant')
  t.equal(isoEvent?.object?.begins, '2025-04-01T00:00:00.000Z', 'the object’s dates')
  allIso(t, isoEvent, 'the whole event')
  t.match(plainEvent?.object?.begins, MS_DATE, 'another subscriber’s stay the default')
})

t.test('the OpenAPI description names it', async (t) => {
  const doc = (await client.request('GET', '/v1/openapi.json')).json
  t.match(doc.components.parameters.dates, { name: 'dates', in: 'query', schema: { enum: ['ms', 'iso'] } })
  t.ok(
    doc.paths['/time/timerecords'].get.parameters.some((parameter: { $ref?: string }) => parameter.$ref === '#/components/parameters/dates'),
    'on lists',
  )
  t.ok(
    doc.paths['/auth/login'].get.parameters.some((parameter: { $ref?: string }) => parameter.$ref === '#/components/parameters/dates'),
    'on login',
  )
  t.match(JSON.stringify(doc.components.schemas.TimeRecord.properties.start), /date-time/, 'an answer’s date may be ISO text')
})
