/*
 * The calendar feed (`GET /v1/users/@self/calendar.ics`) and its secret,
 * over HTTP against a real server: a standard parser (ical.js, Mozilla's,
 * the one Thunderbird uses) reads the feed; events carry a stable UID,
 * SEQUENCE and LAST-MODIFIED that follow the record's changes; the window
 * (default and asked for, in the user's time zone) and its limits; only the
 * caller's own records, and of those only what the caller may see; the
 * secret made, shown once, rotated and revoked, stored only as a hash,
 * opening this feed and nothing else, and gone with a deactivated user; the
 * tenant in the path.
 */
import crypto from 'node:crypto'
import ICAL from 'ical.js'
import t from 'tap'
import { publicUrl, tenantUrl } from '../../src/http/routes/registration.js'
import { expectError } from '../helpers/identity.js'
import { activeActor, startInProcess } from '../helpers/server.js'
import { addUser } from '../helpers/users.js'
import type { AnswerJson, TestResponse } from '../helpers/http.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const tenant = 'acme'
const { token: ownerToken } = await client.createTenant(tenant)
const bob = await addUser(server, tenant, ownerToken, 'Bob')
const DAY_MS = 86_400_000

const owner = await client.request('GET', '/v1/users/@self', { tenant, query: { token: ownerToken } })
const ownerId = owner.json.id as string
await client.request('PUT', '/v1/users/@self', { tenant, query: { token: ownerToken, version_ignore: true }, body: { firstName: 'Ada', lastName: 'Lovelace', timeZone: 'Europe/Berlin' } })

async function create(path: string, body: Record<string, unknown>, token = ownerToken): Promise<AnswerJson> {
  const answer = await client.request('POST', `/v1/${path}`, { tenant, query: { token, response_object: true }, body })
  if (answer.status !== 201) throw new Error(`POST ${path}: ${answer.status} ${answer.text}`)
  return answer.json
}

const record = (start: number, durationMs: number, extra: Record<string, unknown> = {}, user = ownerId, token = ownerToken) =>
  create('time/timerecords', { user: { id: user }, start: `/Date(${start})/`, stop: `/Date(${start + durationMs})/`, duration: durationMs, ...extra }, token)

function feed(query: Record<string, string> = {}, options: { token?: string | null; path?: string; tenant?: string | null } = {}): Promise<TestResponse> {
  const token = options.token === undefined ? ownerToken : options.token
  return client.request('GET', options.path ?? '/v1/users/@self/calendar.ics', {
    tenant: options.tenant === undefined ? tenant : options.tenant,
    query: { ...(token === null ? {} : { token }), ...query },
  })
}

interface ParsedEvent {
  uid: string
  summary: string
  description: string | null
  start: number
  end: number | null
  sequence: number
  lastModified: number
  categories: string[]
}

/** The events of an answer as ical.js reads them. */
function events(answer: TestResponse): ParsedEvent[] {
  const calendar = new ICAL.Component(ICAL.parse(answer.text))
  return calendar.getAllSubcomponents('vevent').map((vevent) => {
    const event = new ICAL.Event(vevent)
    const lastModified = vevent.getFirstPropertyValue('last-modified') as ICAL.Time
    const description = vevent.getFirstPropertyValue('description')
    return {
      uid: event.uid,
      summary: event.summary,
      description: typeof description === 'string' ? description : null,
      start: event.startDate.toJSDate().getTime(),
      end: vevent.hasProperty('dtend') ? event.endDate.toJSDate().getTime() : null,
      sequence: event.sequence,
      lastModified: lastModified.toJSDate().getTime(),
      categories: vevent.getAllProperties('categories').flatMap((property) => property.getValues() as string[]),
    }
  })
}

const globex = await create('time/clients', { name: 'Globex' })
const website = await create('time/projects', { name: 'Website', client: { id: globex.id } })
const design = await create('time/tasks', { name: 'Design', project: { id: website.id } })
const urgent = await create('time/tags', { name: 'urgent' })

t.test('a standard parser reads the feed; UID, SEQUENCE and LAST-MODIFIED follow the record', async (t) => {
  const start = Math.floor((Date.now() - 2 * DAY_MS) / 1000) * 1000
  const made = await record(start, 5_400_000, { project: { id: website.id }, task: { id: design.id }, description: 'Header, footer; and "hero"\nsecond line', tags: [{ id: urgent.id }] })
  const answer = await feed()
  t.equal(answer.status, 200, answer.text)
  t.match(answer.headers['content-type'], /^text\/calendar; charset=utf-8/)
  const calendar = new ICAL.Component(ICAL.parse(answer.text))
  t.equal(calendar.getFirstPropertyValue('version'), '2.0')
  t.match(String(calendar.getFirstPropertyValue('prodid')), /TimeLedger/)
  const [event] = events(answer).filter((found) => found.uid === `${made.id}@timeledger`)
  t.ok(event, 'the record is an event, its UID the record’s id')
  t.same(event, {
    uid: `${made.id}@timeledger`,
    summary: 'Website · Design: Header, footer; and "hero"',
    description: 'Header, footer; and "hero"\nsecond line\nClient: Globex\nProject: Website\nTask: Design',
    start,
    end: start + 5_400_000,
    sequence: 0,
    lastModified: Math.floor(made.updatedAt.match(/\d+/)[0] / 1000) * 1000,
    categories: ['urgent'],
  })
  const changed = await client.request('PUT', `/v1/time/timerecords/${made.id}`, {
    tenant,
    query: { token: ownerToken, response_object: true },
    body: { description: 'Renamed', version: made.version },
  })
  t.equal(changed.status, 200, changed.text)
  const [after] = events(await feed()).filter((found) => found.uid === event?.uid)
  t.equal(after?.sequence, 1, 'SEQUENCE counts the change')
  t.equal(after?.summary, 'Website · Design: Renamed')
  t.ok((after?.lastModified ?? 0) >= (event?.lastModified ?? 0), 'LAST-MODIFIED moves with it')
  await client.request('DELETE', `/v1/time/timerecords/${made.id}`, { tenant, query: { token: ownerToken } })
  t.notOk(
    events(await feed()).some((found) => found.uid === event?.uid),
    'a record in the trash is no event',
  )
})

t.test('the window: by default the last 30 days and the next 7; from and to are days of the user’s time zone', async (t) => {
  const now = Date.now()
  const inside = await Promise.all([record(now - 29 * DAY_MS, 60_000), record(now + 6 * DAY_MS, 60_000)])
  const outside = await Promise.all([record(now - 32 * DAY_MS, 60_000), record(now + 9 * DAY_MS, 60_000)])
  const uids = events(await feed()).map((event) => event.uid)
  for (const made of inside) t.ok(uids.includes(`${made.id}@timeledger`), 'inside the default window')
  for (const made of outside) t.notOk(uids.includes(`${made.id}@timeledger`), 'outside it')
  // 2024-01-31 23:30 in Berlin is 22:30 UTC: in a window ending on the 31st; 2024-02-01 00:30 in Berlin is not.
  const lastEvening = await record(Date.UTC(2024, 0, 31, 22, 30), 60_000)
  const nextMorning = await record(Date.UTC(2024, 0, 31, 23, 30), 60_000)
  const january = events(await feed({ from: '2024-01-01', to: '2024-01-31' })).map((event) => event.uid)
  t.same(january, [`${lastEvening.id}@timeledger`], 'the last day is included, cut in Europe/Berlin')
  t.same(
    events(await feed({ from: '2024-02-01', to: '2024-02-01' })).map((event) => event.uid),
    [`${nextMorning.id}@timeledger`],
  )
  t.same(
    events(await feed({ to: '2024-02-01' })).map((event) => event.uid),
    [`${lastEvening.id}@timeledger`, `${nextMorning.id}@timeledger`],
    'without from: the window before to',
  )
  expectError(t, await feed({ from: '2024-02-30' }), 400, 'TL01-1105', 'no such day')
  expectError(t, await feed({ from: '2024-02-02', to: '2024-02-01' }), 400, 'TL01-1105', 'to before from')
  const tooLong = await feed({ from: '2023-01-01', to: '2024-01-02' })
  expectError(t, tooLong, 400, 'TL01-1105', 'more than 366 days')
  t.match(tooLong.json.message, /at most 366 days/)
  t.equal((await feed({ from: '2023-01-01', to: '2024-01-01' })).status, 200, '366 days are allowed')
})

t.test('only the caller’s own records, and only those the caller may see', async (t) => {
  const start = Date.UTC(2023, 5, 1, 9)
  const bobs = await record(start, 60_000, {}, bob.id, bob.token)
  const owners = await record(start + 3_600_000, 60_000)
  const secretProject = await create('time/projects', { name: 'Secret', personal: true })
  const hidden = await record(start + 7_200_000, 60_000, { project: { id: secretProject.id } }, bob.id)
  const window = { from: '2023-06-01', to: '2023-06-01' }
  t.same(
    events(await feed(window)).map((event) => event.uid),
    [`${owners.id}@timeledger`],
    'the owner’s feed: hers only, not Bob’s',
  )
  t.same(
    events(await feed(window, { token: bob.token })).map((event) => event.uid),
    [`${bobs.id}@timeledger`],
    'Bob’s: his, but not his record on Ada’s personal project',
  )
  t.notOk((await feed(window, { token: bob.token })).text.includes('Secret'))
  t.ok(hidden.id)
})

t.test('the calendar secret: made and shown once, rotated, revoked; it opens this feed and nothing else', async (t) => {
  const made = await client.request('POST', '/v1/users/@self/calendar/secret', { tenant, query: { token: bob.token } })
  t.equal(made.status, 201, made.text)
  const secret = made.json.secret as string
  t.match(secret, /^[A-Za-z0-9_-]{43}$/)
  // Absolute as the service names its addresses (BASE_DOMAIN and PORT, as findurl does: the test server's PORT is 0).
  t.equal(made.json.url, `${tenantUrl(server.service.services, tenant)}/users/@self/calendar.ics?secret=${secret}`)
  t.equal(made.json.webcal, made.json.url.replace(/^http:/, 'webcal:'))
  t.equal(made.json.path, `/v1/users/@self/calendar.ics?secret=${secret}`)
  const shown = await client.request('GET', '/v1/users/@self/calendar/secret', { tenant, query: { token: bob.token } })
  t.match(shown.json, { exists: true, createdAt: made.json.createdAt })
  t.notOk(shown.text.includes(secret), 'never shown again')
  const stored = [...(activeActor(server, tenant)?.state.collection('CalendarSecret').values() ?? [])]
  t.same(
    stored.map((rec) => rec.id),
    [crypto.hash('sha256', secret, 'hex')],
    'stored as its SHA-256 only',
  )

  const bySecret = await feed({ secret, from: '2023-06-01', to: '2023-06-01' }, { token: null })
  t.equal(bySecret.status, 200, 'a calendar application needs no token')
  const byToken = await feed({ from: '2023-06-01', to: '2023-06-01' }, { token: bob.token })
  t.same(
    events(bySecret).map((event) => event.uid),
    events(byToken).map((event) => event.uid),
    'the same feed as Bob’s token opens',
  )
  t.ok(bySecret.headers['ratelimit-remaining'] !== undefined, 'counted against Bob’s rate limit')

  // Nothing else opens with it.
  const refused = async (label: string, answer: TestResponse, status: number, code: string) => expectError(t, answer, status, code, label)
  await refused('as a token', await client.request('GET', '/v1/time/timerecords', { tenant, query: { token: secret } }), 401, 'TL01-1010')
  await refused('as a Bearer token', await client.request('GET', '/v1/users/@self', { tenant, headers: { authorization: `Bearer ${secret}` } }), 401, 'TL01-1010')
  await refused('as secret= elsewhere', await client.request('GET', '/v1/time/timerecords', { tenant, query: { secret } }), 400, 'TL01-1002')
  await refused('to make another secret', await client.request('POST', '/v1/users/@self/calendar/secret', { tenant, query: { secret } }), 400, 'TL01-1002')
  await refused('on the change feed', await client.request('GET', '/v1/changes', { tenant, query: { token: secret }, headers: { accept: 'text/event-stream' } }), 401, 'TL01-1010')
  const login = await client.request('GET', '/v1/auth/login', { tenant, query: { apikey: client.apiKey }, headers: { authorization: `Basic ${Buffer.from(`${secret}:`).toString('base64')}` } })
  await refused('as a secret key at login', login, 401, 'TL01-1001')
  const { token: otherToken } = await client.createTenant('globex')
  await refused('on another tenant', await feed({ secret }, { token: null, tenant: 'globex' }), 401, 'TL01-1010')
  t.ok(otherToken)
  await refused('a wrong secret', await feed({ secret: `${secret.slice(0, -1)}x` }, { token: null }), 401, 'TL01-1010')
  await refused('an empty secret', await feed({ secret: '' }, { token: null }), 401, 'TL01-1010')
  await refused('no credential at all', await feed({}, { token: null }), 400, 'TL01-1002')

  // Rotation: a new secret, the old one stops working in the same write.
  const rotated = await client.request('POST', '/v1/users/@self/calendar/secret', { tenant, query: { token: bob.token } })
  t.equal(rotated.status, 201)
  t.not(rotated.json.secret, secret)
  await refused('the old secret after rotation', await feed({ secret }, { token: null }), 401, 'TL01-1010')
  t.equal((await feed({ secret: rotated.json.secret }, { token: null })).status, 200, 'the new one works')
  t.equal([...(activeActor(server, tenant)?.state.collection('CalendarSecret').values() ?? [])].length, 1, 'one secret per user')

  // Revocation.
  const revoked = await client.request('DELETE', '/v1/users/@self/calendar/secret', { tenant, query: { token: bob.token } })
  t.same(revoked.json, { deleted: true })
  await refused('a revoked secret', await feed({ secret: rotated.json.secret }, { token: null }), 401, 'TL01-1010')
  await refused('revoking again', await client.request('DELETE', '/v1/users/@self/calendar/secret', { tenant, query: { token: bob.token } }), 404, 'TL01-1101')
  t.same((await client.request('GET', '/v1/users/@self/calendar/secret', { tenant, query: { token: bob.token } })).json, { exists: false, createdAt: null })
})

t.test('a deactivated user’s secret stops working and does not come back', async (t) => {
  const carol = await addUser(server, tenant, ownerToken, 'Carol')
  const made = await client.request('POST', '/v1/users/@self/calendar/secret', { tenant, query: { token: carol.token } })
  t.equal((await feed({ secret: made.json.secret }, { token: null })).status, 200)
  await client.request('PUT', `/v1/users/${carol.id}`, { tenant, query: { token: ownerToken, version_ignore: true }, body: { active: false } })
  expectError(t, await feed({ secret: made.json.secret }, { token: null }), 401, 'TL01-1010', 'deactivated')
  await client.request('PUT', `/v1/users/${carol.id}`, { tenant, query: { token: ownerToken, version_ignore: true }, body: { active: true } })
  expectError(t, await feed({ secret: made.json.secret }, { token: null }), 401, 'TL01-1010', 'active again: the secret went with the lock-out')
})

t.test('the tenant in the path', async (t) => {
  const made = await client.request('POST', `/tenant/${tenant}/v1/users/@self/calendar/secret`, { tenant: null, query: { token: ownerToken } })
  t.equal(made.status, 201, made.text)
  t.equal(made.json.path, `/tenant/${tenant}/v1/users/@self/calendar.ics?secret=${made.json.secret}`, 'the path in the form of the request')
  t.equal(made.json.url, `${publicUrl(server.service.services).replace(/\/v1$/, '')}/tenant/${tenant}/v1/users/@self/calendar.ics?secret=${made.json.secret}`)
  const [path, query] = (made.json.path as string).split('?')
  const answer = await client.request('GET', path as string, { tenant: null, query: Object.fromEntries(new URLSearchParams(query)) })
  t.equal(answer.status, 200, answer.text)
  t.ok(events(answer).length > 0)
})
