/*
 * Tags (time/tags, issue 26): a name unique in the account and an optional
 * colour; a time record carries a list of tags (TimeRecord.tags, a list of
 * references: stored as distinct ids, answered as embedded tags in JSON and
 * XML, taken from JSON arrays, XML's repeated elements and `$set` text);
 * `$filter` finds records by tag (`tags/id eq …`: any element equals;
 * `ne`: none does) and by a tag's field (`tags/name eq …`); summaries
 * and reports group by tag; time/tags/{id}/timerecords lists a tag's
 * records. A list is refused where one value is needed ($orderby, ordered
 * comparisons, functions).
 */
import fs from 'node:fs'
import t from 'tap'
import { tenantSnapshotDir } from '../../src/persist/snapshotFile.js'
import { api, ref } from '../helpers/api.js'
import { expectError } from '../helpers/identity.js'
import { startInProcess, type InProcessServer } from '../helpers/server.js'

let server: InProcessServer = await startInProcess()
t.teardown(() => server.stop())
const owner = await server.client.createTenant('tags')
let ownerApi = api(server.client, 'tags', owner.token)
const self = (await ownerApi.get('users/@self')).json
const me = (Array.isArray(self) ? self[0] : self) as { id: string }

const urgent = await ownerApi.create('time/tags', { name: 'urgent', color: '#FF0000' })
const meeting = await ownerApi.create('time/tags', { name: 'meeting' })
const remote = await ownerApi.create('time/tags', { name: 'remote', color: '#00aa00' })
const record = (day: string, tags: unknown) => ({ user: ref(me.id), start: `${day}T08:00:00Z`, stop: `${day}T09:00:00Z`, duration: 3_600_000, tags })

const both = await ownerApi.create('time/timerecords', record('2026-03-02', [ref(urgent), ref(meeting), ref(urgent)]))
const onlyMeeting = await ownerApi.create('time/timerecords', record('2026-03-03', [meeting]))
const none = await ownerApi.create('time/timerecords', record('2026-03-04', []))
const unset = await ownerApi.create('time/timerecords', { user: ref(me.id), start: '2026-03-05T08:00:00Z', duration: 60_000 })

t.test('tags are declared like every resource', async (t) => {
  expectError(t, await ownerApi.post('time/tags', { name: 'urgent' }), 412, 'TL01-1104', 'the name is unique')
  expectError(t, await ownerApi.post('time/tags', { name: 'pink', color: 'pink' }), 412, 'TL01-1104', 'a colour is #RRGGBB')
  expectError(t, await ownerApi.post('time/tags', { color: '#000000' }), 412, 'TL01-1104', 'a tag needs a name')
  const metadata = await ownerApi.get('time/timerecords/$metadata')
  const tags = (metadata.json.fields as { name: string; type: string; list?: boolean; path?: string }[]).find((field) => field.name === 'tags')
  t.match(tags, { type: 'Tag', list: true, path: '/v1/time/tags' }, 'TimeRecord.tags is a list of Tag')
  const dummy = await ownerApi.get('time/timerecords/$dummy')
  t.ok(Array.isArray(dummy.json.tags), 'the dummy holds a list')
  t.match((await ownerApi.get('time/tags/$dummy')).json.color, /^#[0-9A-Fa-f]{6}$/, 'the dummy colour matches its pattern')
})

t.test('a record carries distinct tags, embedded when read', async (t) => {
  const got = (await ownerApi.get(`time/timerecords/${both}`)).json
  t.same(
    got.tags.map((tag: { id: string }) => tag.id),
    [urgent, meeting],
    'distinct, in the order given',
  )
  t.equal(got.tags[0].name, 'urgent', 'embedded')
  t.equal(got.tags[0].color, '#FF0000')
  const stubs = (await ownerApi.get(`time/timerecords/${both}`, { no_expand: true })).json
  t.same(Object.keys(stubs.tags[0]).sort(), ['displayName', 'id', 'name', 'version'], 'stubs with no_expand')
  t.same((await ownerApi.get(`time/timerecords/${unset}`)).json.tags, [], 'no tags: an empty list')
  const listed = await ownerApi.get('time/timerecords', { $orderby: 'start' })
  t.same(
    listed.json[1].tags.map((tag: { name: string }) => tag.name),
    ['meeting'],
    'a list of records shows them too',
  )
  const xml = await ownerApi.get(`time/timerecords/${both}`, { format: 'xml' })
  t.match(xml.text, /<tags><id>[^<]+<\/id>.*<name>urgent<\/name>.*<\/tags><tags>.*<name>meeting<\/name>/, 'XML repeats the element')
})

t.test('bad tag lists are refused with a clear 4xx', async (t) => {
  expectError(t, await ownerApi.post('time/timerecords', record('2026-03-06', ref(urgent))), 400, 'TL01-1105', 'one object is not a list in JSON')
  expectError(t, await ownerApi.post('time/timerecords', record('2026-03-06', [42])), 400, 'TL01-1105', 'an element is a reference')
  const missing = await ownerApi.post('time/timerecords', record('2026-03-06', [ref('00000000-0000-4000-8000-000000000000')]))
  expectError(t, missing, 412, 'TL01-1104', 'an unknown tag')
  t.equal(missing.json.constraintViolation.field, 'tags')
  const many = Array.from({ length: 101 }, () => ref(urgent))
  expectError(t, await ownerApi.post('time/timerecords', record('2026-03-06', many)), 400, 'TL01-1105', 'at most 100')
})

t.test('tags are written from XML and from $set text', async (t) => {
  const body = `<timeRecord><user><id>${me.id}</id></user><start>2026-03-07T08:00:00Z</start><tags><id>${remote}</id></tags><tags><id>${urgent}</id></tags></timeRecord>`
  const created = await ownerApi.call('POST', 'time/timerecords', { rawBody: body, headers: { 'content-type': 'application/xml' }, query: { response_object: true } })
  t.equal(created.status, 201, created.text)
  t.same(
    created.json.tags.map((tag: { id: string }) => tag.id),
    [remote, urgent],
    'two repeated elements',
  )
  const one = `<timeRecord><user><id>${me.id}</id></user><start>2026-03-07T08:00:00Z</start><tags><id>${remote}</id></tags></timeRecord>`
  const single = await ownerApi.call('POST', 'time/timerecords', { rawBody: one, headers: { 'content-type': 'application/xml' }, query: { response_object: true } })
  t.same(
    single.json.tags.map((tag: { id: string }) => tag.id),
    [remote],
    'one element is a list of one',
  )
  const set = await ownerApi.post(`time/timerecords/${single.json.id}/$set`, undefined, { tags: `${meeting},${urgent}` })
  t.equal(set.status, 200, set.text)
  t.same(
    (await ownerApi.get(`time/timerecords/${single.json.id}`)).json.tags.map((tag: { id: string }) => tag.id),
    [meeting, urgent],
  )
  for (const id of [created.json.id, single.json.id]) await ownerApi.del(`time/timerecords/${id}`, { hard: true })
})

t.test('$filter finds records by tag', async (t) => {
  t.same(await ownerApi.ids('time/timerecords', { $filter: `tags/id eq '${meeting}'` }), [both, onlyMeeting].sort(), 'any element equals')
  t.same(await ownerApi.ids('time/timerecords', { $filter: `tags eq '${urgent}'` }), [both], 'the list itself compares by id')
  t.same(await ownerApi.ids('time/timerecords', { $filter: `'${urgent}' eq tags/id` }), [both], 'either way round')
  t.same(await ownerApi.ids('time/timerecords', { $filter: "tags/name eq 'meeting' and not (tags/name eq 'urgent')" }), [onlyMeeting], "a tag's field")
  t.same(await ownerApi.ids('time/timerecords', { $filter: `tags/id ne '${urgent}'` }), [onlyMeeting, none, unset].sort(), 'ne: no element equals')
  for (const filter of [`tags/id gt '${urgent}'`, 'length(tags/name) eq 3', 'tags/id eq tags/id', 'tags/name eq 1', 'tags']) {
    expectError(t, await ownerApi.get('time/timerecords', { $filter: filter }), 400, 'TL01-1105', filter)
  }
  expectError(t, await ownerApi.get('time/timerecords', { $orderby: 'tags/name' }), 400, 'TL01-1105', 'no ordering by a list')
})

t.test('a tag lists its time records', async (t) => {
  t.same(await ownerApi.ids(`time/tags/${meeting}/timerecords`), [both, onlyMeeting].sort(), 'time/tags/{id}/timerecords')
  t.equal((await ownerApi.get(`time/tags/${urgent}/timerecords/$count`)).text, '1', '$count')
  const filtered = await ownerApi.ids(`time/tags/${meeting}/timerecords`, { $filter: "start lt datetime'2026-03-03T00:00:00'" })
  t.same(filtered, [both], 'with the query options of the top-level list')
  const created = await ownerApi.post(`time/tags/${remote}/timerecords`, { user: ref(me.id), start: '2026-03-08T08:00:00Z', duration: 60_000 }, { response_object: true })
  t.equal(created.status, 201, created.text)
  t.same(
    created.json.tags.map((tag: { id: string }) => tag.id),
    [remote],
    'a record made there carries the tag',
  )
  await ownerApi.del(`time/timerecords/${created.json.id}`, { hard: true })
  expectError(t, await ownerApi.get('time/tags/00000000-0000-4000-8000-000000000000/timerecords'), 404, 'TL01-1101', 'no such tag')
})

t.test('summaries group by tag', async (t) => {
  const summary = await ownerApi.get('time/timerecords/summary', { summary: 'tags/name;count();sum(duration)' })
  t.equal(summary.status, 200, summary.text)
  t.same(
    summary.json.map((entry: { key: string; summaries: { value: string }[] }) => [entry.key, entry.summaries[0]?.value, entry.summaries[1]?.value]),
    [
      ['meeting', '2', '7200000'],
      ['null', '2', '3660000'],
      ['urgent', '1', '3600000'],
    ],
  )
})

t.test('reports group by tag', async (t) => {
  const grouped = await ownerApi.get('time/reports/groupedtotals', { range: 31, range_from: '2026-03-01', summary: 'tags/id' })
  t.equal(grouped.status, 200, grouped.text)
  const byKey = new Map(grouped.json.map((entry: { key: string; displayName: string; totals: { count: number } }) => [entry.key, entry]))
  t.match(byKey.get(meeting), { displayName: 'meeting', totals: { count: 2 } }, 'a record counts under each of its tags')
  t.match(byKey.get(urgent), { displayName: 'urgent', totals: { count: 1 } })
  t.match(byKey.get('null'), { totals: { count: 2 } }, 'records without tags')
  const filtered = await ownerApi.get('time/reports/readtotals', { range: 31, range_from: '2026-03-01', $filter: `tags/id eq '${urgent}'` })
  t.match(filtered.json, { '*': { count: 1 } }, 'a report filters by tag')
})

t.test('tags survive a restart, from the snapshot and from the log alone', async (t) => {
  const dataDir = server.dataDir
  const check = async (when: string) => {
    const token = await server.client.login('tags', owner.email, owner.password)
    ownerApi = api(server.client, 'tags', token)
    t.same(
      (await ownerApi.get(`time/timerecords/${both}`)).json.tags.map((tag: { id: string }) => tag.id),
      [urgent, meeting],
      when,
    )
    t.same(await ownerApi.ids('time/timerecords', { $filter: `tags/id eq '${urgent}'` }), [both], `${when}: filterable`)
  }
  await server.stop()
  server = await startInProcess(dataDir)
  await check('after restart')
  t.not(server.service.services.registry.get('tags')?.lastRecovery?.snapshotFile, null, 'the snapshot was loaded')
  await server.stop()
  fs.rmSync(tenantSnapshotDir(dataDir, 'tags'), { recursive: true, force: true })
  server = await startInProcess(dataDir)
  await check('after replaying the log')
  t.equal(server.service.services.registry.get('tags')?.lastRecovery?.snapshotFile, null, 'no snapshot left')
})
