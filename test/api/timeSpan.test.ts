/*
 * start, stop and duration of time records and impulses agree (issue 26):
 * a stop before the start, or a duration other than stop − start, is
 * refused with 412 naming the field, on create, PUT, $set and in a batch.
 * A time record completes its span (issue 38): the one of stop and
 * duration a write leaves out is derived from the others and stored, and a
 * change of one moves the other; an impulse keeps what is missing.
 */
import t, { type Test } from 'tap'
import { startInProcess } from '../helpers/server.js'
import { api } from '../helpers/api.js'
import { expectError } from '../helpers/identity.js'
import type { TestResponse } from '../helpers/http.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const created = await client.createTenant('spans')
const owner = api(client, 'spans', created.token)
const me = (await owner.get('users/@self')).json.id as string
const HOUR_MS = 3_600_000
const START = '2026-03-02T10:00:00Z'
const START_MS = Date.parse(START)

function refusedOn(t: Test, answer: TestResponse, field: string, constraint: string, label: string): void {
  expectError(t, answer, 412, 'TL01-1104', label)
  t.match(answer.json?.constraintViolation, { field, constraint }, `${label}: names ${field}`)
  t.match(answer.json?.message, new RegExp(field), `${label}: the message names ${field}`)
}

for (const path of ['time/timerecords', 'time/impulses']) {
  t.test(`${path}: refused when the fields disagree`, async (t) => {
    const base = { user: { id: me }, description: `span of ${path}` }
    refusedOn(t, await owner.post(path, { ...base, start: START, stop: '2026-03-02T09:00:00Z' }), 'stop', 'NotBeforeStart', 'stop before start')
    refusedOn(t, await owner.post(path, { ...base, start: START, stop: '2026-03-02T11:00:00Z', duration: 2 * HOUR_MS }), 'duration', 'StopMinusStart', 'a duration longer than stop − start')
    refusedOn(t, await owner.post(path, { ...base, start: START, stop: '2026-03-02T11:00:00Z', duration: HOUR_MS / 2 }), 'duration', 'StopMinusStart', 'a shorter one')
    refusedOn(t, await owner.post(path, { ...base, start: `/Date(${START_MS})/`, stop: `/Date(${START_MS + HOUR_MS})/`, duration: HOUR_MS + 1 }), 'duration', 'StopMinusStart', 'one millisecond off')
    const xml = await owner.call('POST', path, {
      rawBody: `<x><user><id>${me}</id></user><start>${START}</start><stop>2026-03-02T09:59:59Z</stop></x>`,
      headers: { 'content-type': 'application/xml' },
    })
    refusedOn(t, xml, 'stop', 'NotBeforeStart', 'in XML too')
    t.equal((await owner.get(path, { $filter: `description eq 'span of ${path}'` })).json.length, 0, 'nothing was stored')
  })

  t.test(`${path}: accepted when they agree or some are missing`, async (t) => {
    const base = { user: { id: me } }
    const agreeing = await owner.post(path, { ...base, start: START, stop: '2026-03-02T11:00:00Z', duration: HOUR_MS }, { response_object: true })
    t.equal(agreeing.status, 201, agreeing.text)
    t.equal(agreeing.json.duration, HOUR_MS)
    t.equal((await owner.post(path, { ...base, start: START, stop: START, duration: 0 })).status, 201, 'an empty span')
    t.equal((await owner.post(path, { ...base, start: START, stop: '2026-03-02T11:00:00Z' })).status, 201, 'start and stop, no duration')
    t.equal((await owner.post(path, { ...base, start: START, duration: 5 * HOUR_MS })).status, 201, 'start and duration, no stop')
    t.equal((await owner.post(path, { ...base, duration: HOUR_MS })).status, 201, 'only a duration')
    t.equal((await owner.post(path, { ...base, stop: START, duration: HOUR_MS })).status, 201, 'stop and duration, no start')
  })
}

t.test('time/impulses: a change is checked on the record as it would be stored', async (t) => {
  const path = 'time/impulses'
  const id = await owner.create(path, { user: { id: me }, start: START, stop: '2026-03-02T11:00:00Z', duration: HOUR_MS })
  const before = (await owner.get(`${path}/${id}`)).json
  refusedOn(t, await owner.put(`${path}/${id}`, { stop: '2026-03-02T12:00:00Z', version: before.version }), 'duration', 'StopMinusStart', 'a PUT moving only stop')
  refusedOn(t, await owner.put(`${path}/${id}`, { start: '2026-03-02T12:00:00Z', version: before.version }), 'stop', 'NotBeforeStart', 'a PUT moving start past stop')
  refusedOn(t, await owner.post(`${path}/${id}/$set`, undefined, { duration: '1' }), 'duration', 'StopMinusStart', '$set')
  const moved = await owner.put(`${path}/${id}`, { stop: '2026-03-02T12:00:00Z', duration: 2 * HOUR_MS, version: before.version }, { response_object: true })
  t.equal(moved.status, 200, moved.text)
  t.equal(moved.json.duration, 2 * HOUR_MS, 'stop and duration moved together')
  const batch = await client.request('POST', '/v1/batch', {
    tenant: 'spans',
    query: { token: created.token },
    body: [{ id: 'bad', method: 'PUT', path: `/v1/${path}/${id}`, body: JSON.stringify({ duration: 7, version: moved.json.version }) }],
  })
  t.equal(batch.json[0].code, 412, 'a batch item too')
  t.equal(JSON.parse(batch.json[0].body).constraintViolation.field, 'duration')
  t.equal((await owner.get(`${path}/${id}`)).json.duration, 2 * HOUR_MS, 'unchanged by the refusals')
})

const at = (ms: number) => `/Date(${ms})/`

/** The start, stop and duration a time record was stored with. */
async function spanOf(id: string): Promise<{ start: string | null; stop: string | null; duration: number | null; version: number }> {
  const { start, stop, duration, version } = (await owner.get(`time/timerecords/${id}`)).json
  return { start, stop, duration, version }
}

t.test('time/timerecords: a create stores the one of stop and duration it leaves out', async (t) => {
  const base = { user: { id: me } }
  const fromStop = await owner.create('time/timerecords', { ...base, start: START, stop: '2026-03-02T11:30:00Z' })
  t.match(await spanOf(fromStop), { start: at(START_MS), stop: at(START_MS + 1.5 * HOUR_MS), duration: 1.5 * HOUR_MS }, 'start and stop: the duration is stop − start')
  const fromDuration = await owner.create('time/timerecords', { ...base, start: START, duration: 2 * HOUR_MS })
  t.match(await spanOf(fromDuration), { start: at(START_MS), stop: at(START_MS + 2 * HOUR_MS), duration: 2 * HOUR_MS }, 'start and duration: the stop is start + duration')
  const open = await owner.create('time/timerecords', { ...base, start: START })
  t.match(await spanOf(open), { start: at(START_MS), stop: null, duration: null }, 'a start alone stays open')
  const bare = await owner.create('time/timerecords', { ...base, duration: HOUR_MS })
  t.match(await spanOf(bare), { start: null, stop: null, duration: HOUR_MS }, 'a bare duration is kept as given')
  const xml = await owner.call('POST', 'time/timerecords', {
    rawBody: `<timeRecord><user><id>${me}</id></user><start>${START}</start><stop>2026-03-02T10:15:00Z</stop></timeRecord>`,
    headers: { 'content-type': 'application/xml' },
  })
  t.equal(xml.status, 201, xml.text)
  t.equal((await spanOf(xml.json.id)).duration, 15 * 60_000, 'from an XML body too')
  const batch = await client.request('POST', '/v1/batch', {
    tenant: 'spans',
    query: { token: created.token },
    body: [{ id: 'one', method: 'POST', path: '/v1/time/timerecords', body: JSON.stringify({ ...base, start: START, stop: '2026-03-02T10:01:00Z' }) }],
  })
  t.equal(batch.json[0].code, 201, batch.json[0].body)
  t.equal((await spanOf(JSON.parse(batch.json[0].body).id)).duration, 60_000, 'in a batch too')
})

t.test('time/timerecords: a change of one of the three moves what it leaves out', async (t) => {
  const id = await owner.create('time/timerecords', { user: { id: me }, start: START, stop: '2026-03-02T11:00:00Z' })
  let span = await spanOf(id)
  const put = await owner.put(`time/timerecords/${id}`, { stop: '2026-03-02T12:00:00Z', version: span.version })
  t.equal(put.status, 200, put.text)
  t.match(await spanOf(id), { stop: at(START_MS + 2 * HOUR_MS), duration: 2 * HOUR_MS }, 'a PUT moving the stop: the duration follows')
  span = await spanOf(id)
  t.equal((await owner.put(`time/timerecords/${id}`, { start: '2026-03-02T11:00:00Z', version: span.version })).status, 200)
  t.match(await spanOf(id), { start: at(START_MS + HOUR_MS), stop: at(START_MS + 3 * HOUR_MS), duration: 2 * HOUR_MS }, 'moving the start moves the record: the duration stays')
  span = await spanOf(id)
  t.equal((await owner.put(`time/timerecords/${id}`, { start: '2026-03-02T11:00:00Z', stop: '2026-03-02T12:00:00Z', version: span.version })).status, 200)
  t.match(await spanOf(id), { start: at(START_MS + HOUR_MS), stop: at(START_MS + 2 * HOUR_MS), duration: HOUR_MS }, 'a start and a stop: the duration follows')
  t.equal((await owner.post(`time/timerecords/${id}/$set`, undefined, { duration: String(3 * HOUR_MS) })).status, 200)
  t.match(await spanOf(id), { start: at(START_MS + HOUR_MS), stop: at(START_MS + 4 * HOUR_MS), duration: 3 * HOUR_MS }, '$set of the duration moves the stop')
  span = await spanOf(id)
  t.equal((await owner.put(`time/timerecords/${id}`, { stop: null, version: span.version })).status, 200)
  t.match(await spanOf(id), { stop: at(START_MS + 4 * HOUR_MS), duration: 3 * HOUR_MS }, 'a cleared stop comes back from the duration')
  span = await spanOf(id)
  t.equal((await owner.put(`time/timerecords/${id}`, { stop: null, duration: null, version: span.version })).status, 200)
  t.match(await spanOf(id), { start: at(START_MS + HOUR_MS), stop: null, duration: null }, 'clearing both reopens the record')
  span = await spanOf(id)
  refusedOn(t, await owner.put(`time/timerecords/${id}`, { stop: START, version: span.version }), 'stop', 'NotBeforeStart', 'a stop before the start is still refused')
  refusedOn(t, await owner.put(`time/timerecords/${id}`, { stop: '2026-03-02T12:00:00Z', duration: 1, version: span.version }), 'duration', 'StopMinusStart', 'and both given disagreeing')
  t.match(await spanOf(id), { stop: null, duration: null, version: span.version }, 'unchanged by the refusals')
})

t.test('a stopped stopwatch makes a record that keeps the rule', async (t) => {
  const impulse = await owner.create('time/impulses', { user: { id: me }, mode: 'STOPWATCH', start: new Date(Date.now() - 90_000).toISOString() })
  const stopped = await owner.call('POST', `time/impulses/${impulse}/$stop`)
  t.ok(stopped.status === 200 || stopped.status === 201, stopped.text)
  const record = (await owner.get(`time/timerecords/${stopped.json.id}`)).json
  t.equal(record.duration, Number(/\d+/.exec(record.stop)?.[0]) - Number(/\d+/.exec(record.start)?.[0]), 'duration = stop − start')
})
