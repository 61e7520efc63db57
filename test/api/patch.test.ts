/*
 * PATCH of an object with a JSON Merge Patch (RFC 7396; issue 38): as
 * `application/merge-patch+json`, plain JSON or XML, through the same
 * update as PUT (the version rule, If-Match, validation, permissions,
 * version_ignore, response_object), over HTTP: the fields named change and
 * the others stay, null clears a field (412 for one that may not be null),
 * a reference merges (an object with an id points it elsewhere, one without
 * leaves it), a list is replaced; unknown fields are ignored as PUT ignores
 * them; it works with `method=PATCH`, in a batch, and is refused with 415
 * and Accept-Patch for a body it does not take. The OpenAPI description
 * names it, with a merge patch body.
 */
import t from 'tap'
import { api, newUser, ref } from '../helpers/api.js'
import { expectError } from '../helpers/identity.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const tenant = 'patches'
const created = await client.createTenant(tenant)
const owner = api(client, tenant, created.token)
const me = (await owner.get('users/@self')).json.id as string
const bert = await newUser(client, tenant, owner, 'Bert')
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' }

const patch = (path: string, body: unknown, query: Record<string, string | number | boolean> = {}, headers: Record<string, string> = MERGE_PATCH) =>
  owner.call('PATCH', path, { rawBody: JSON.stringify(body), query, headers })
const read = async (path: string) => (await owner.get(path)).json

const globex = await owner.create('time/clients', { name: 'Globex' })
const initech = await owner.create('time/clients', { name: 'Initech' })

async function project(): Promise<string> {
  return owner.create('time/projects', { name: 'Apollo', code: 'AP', note: 'the first', billable: true, client: ref(globex) })
}

t.test('the fields named change, the others stay', async (t) => {
  const id = await project()
  const answer = await patch(`time/projects/${id}`, { name: 'Artemis', version: 1 })
  t.equal(answer.status, 200, answer.text)
  t.same(answer.json, { id, version: 2 }, 'answers {id, version} as PUT does')
  t.match(await read(`time/projects/${id}`), { name: 'Artemis', code: 'AP', note: 'the first', billable: true, client: { id: globex }, version: 2 })
  const plain = await patch(`time/projects/${id}`, { code: 'AR', version: 2 }, { response_object: true }, { 'content-type': 'application/json' })
  t.equal(plain.status, 200, plain.text)
  t.match(plain.json, { id, name: 'Artemis', code: 'AR', version: 3 }, 'plain JSON too; response_object answers the object')
  const bare = await owner.call('PATCH', `time/projects/${id}`, { rawBody: JSON.stringify({ note: 'untyped', version: 3 }) })
  t.equal(bare.status, 200, 'a body without a Content-Type is JSON, as for PUT')
  t.equal((await read(`time/projects/${id}`)).note, 'untyped')
})

t.test('null clears a field; one that may not be null is refused as PUT refuses it', async (t) => {
  const id = await project()
  t.equal((await patch(`time/projects/${id}`, { note: null, code: null, version: 1 })).status, 200)
  t.match(await read(`time/projects/${id}`), { note: null, code: null, name: 'Apollo' })
  const refused = await patch(`time/projects/${id}`, { effective: null, version: 2 })
  expectError(t, refused, 412, 'TL01-1104', 'a NotNull field')
  t.match(refused.json.constraintViolation, { field: 'effective', constraint: 'NotNull' })
  const asPut = await owner.put(`time/projects/${id}`, { effective: null, version: 2 })
  t.same([asPut.status, asPut.json.constraintViolation], [refused.status, refused.json.constraintViolation], 'as PUT')
})

t.test('a reference merges: an id points it elsewhere, an object without one leaves it', async (t) => {
  const id = await project()
  t.equal((await patch(`time/projects/${id}`, { client: { id: initech }, version: 1 })).status, 200)
  t.match(await read(`time/projects/${id}`), { client: { id: initech } }, 'another client')
  t.equal((await patch(`time/projects/${id}`, { client: { name: 'Renamed?' }, note: 'kept ref', version: 2 })).status, 200)
  t.match(await read(`time/projects/${id}`), { client: { id: initech, name: 'Initech' }, note: 'kept ref' }, 'the reference and the client stay')
  t.equal((await patch(`time/projects/${id}`, { client: { id: null }, version: 3 })).status, 200)
  t.equal((await read(`time/projects/${id}`)).client, null, 'an id of null clears it')
  t.equal((await patch(`time/projects/${id}`, { client: { id: globex }, version: 4 })).status, 200)
  t.equal((await patch(`time/projects/${id}`, { client: null, version: 5 })).status, 200)
  t.equal((await read(`time/projects/${id}`)).client, null, 'null clears it')
  const missing = await patch(`time/projects/${id}`, { client: { id: '00000000-0000-4000-8000-000000000000' }, version: 6 })
  expectError(t, missing, 412, 'TL01-1104', 'a reference to nothing')
})

t.test('a list of references is replaced whole', async (t) => {
  const red = await owner.create('time/tags', { name: 'red' })
  const blue = await owner.create('time/tags', { name: 'blue' })
  const record = await owner.create('time/timerecords', { user: ref(me), duration: 1000, tags: [ref(red), ref(blue)] })
  t.equal((await patch(`time/timerecords/${record}`, { tags: [{ id: blue }], version: 1 })).status, 200)
  t.same(
    (await read(`time/timerecords/${record}`)).tags.map((tag: { id: string }) => tag.id),
    [blue],
  )
  t.equal((await patch(`time/timerecords/${record}`, { tags: null, version: 2 })).status, 200)
  t.same((await read(`time/timerecords/${record}`)).tags, [], 'null empties it')
})

t.test('a time record patched moves its span as any write does', async (t) => {
  const record = await owner.create('time/timerecords', { user: ref(me), start: '2026-02-02T08:00:00Z', stop: '2026-02-02T09:00:00Z' })
  t.equal((await patch(`time/timerecords/${record}`, { stop: '2026-02-02T10:00:00Z', version: 1 })).status, 200)
  t.equal((await read(`time/timerecords/${record}`)).duration, 2 * 3_600_000)
})

t.test('the version as PUT checks it: in the body, If-Match, version_ignore', async (t) => {
  const id = await project()
  expectError(t, await patch(`time/projects/${id}`, { name: 'x', version: 7 }), 409, 'TL01-1107', 'a stale version')
  expectError(t, await patch(`time/projects/${id}`, { name: 'x' }), 409, 'TL01-1107', 'no version at all, as PUT')
  const etag = (await owner.get(`time/projects/${id}`)).headers.etag as string
  const matched = await patch(`time/projects/${id}`, { name: 'by tag' }, {}, { ...MERGE_PATCH, 'if-match': etag })
  t.equal(matched.status, 200, 'If-Match names the version instead')
  expectError(t, await patch(`time/projects/${id}`, { name: 'stale tag' }, {}, { ...MERGE_PATCH, 'if-match': etag }), 412, 'TL01-1110', 'a stale If-Match')
  const ignored = await patch(`time/projects/${id}`, { name: 'ignored', version: 1 }, { version_ignore: true })
  t.equal(ignored.status, 200, 'version_ignore=true writes over any version')
  t.match(await read(`time/projects/${id}`), { name: 'ignored', version: 3 })
})

t.test('validation, unknown fields and permissions as PUT', async (t) => {
  const id = await project()
  const tooLong = await patch(`time/projects/${id}`, { code: 'x'.repeat(21), version: 1 })
  expectError(t, tooLong, 412, 'TL01-1104', 'a constraint')
  t.match(tooLong.json.constraintViolation, { field: 'code', constraint: 'Size' })
  expectError(t, await patch(`time/projects/${id}`, { billable: 'yes', version: 1 }), 400, 'TL01-1105', 'a value of the wrong type')
  const unknown = await patch(`time/projects/${id}`, { colour: 'red', createdAt: '/Date(0)/', id: 'other', version: 1 }, { response_object: true })
  const unknownPut = await owner.put(`time/projects/${id}`, { colour: 'red', createdAt: '/Date(0)/', id: 'other', version: 2 }, { response_object: true })
  t.same([unknown.status, unknownPut.status], [200, 200], 'unknown and read-only fields are ignored by both')
  t.equal(unknown.json.id, id)
  t.notOk('colour' in unknown.json)
  const byBert = await bert.api.call('PATCH', `time/projects/${id}`, { rawBody: JSON.stringify({ name: 'mine now', version: 3 }), headers: MERGE_PATCH })
  const byBertPut = await bert.api.put(`time/projects/${id}`, { name: 'mine now', version: 3 })
  expectError(t, byBert, 403, 'TL01-1008', "a plain user on the owner's project")
  t.equal(byBertPut.status, byBert.status, 'as PUT')
  const own = await bert.api.create('time/projects', { name: 'Bert’s' })
  t.equal((await bert.api.call('PATCH', `time/projects/${own}`, { rawBody: JSON.stringify({ note: 'mine', version: 1 }), headers: MERGE_PATCH })).status, 200, 'on their own')
  const trashItem = (await owner.del(`time/projects/${own}`)).json.trashItem.id as string
  expectError(t, await owner.call('PATCH', `trash/${trashItem}`, { rawBody: '{}', headers: MERGE_PATCH }), 400, 'TL01-1103', 'what PUT cannot change')
})

t.test('XML, method=PATCH, a batch item', async (t) => {
  const id = await project()
  const xml = await owner.call('PATCH', `time/projects/${id}`, { rawBody: '<project><name>From XML</name><version>1</version></project>', headers: { 'content-type': 'application/xml' } })
  t.equal(xml.status, 200, xml.text)
  t.match(await read(`time/projects/${id}`), { name: 'From XML', code: 'AP' })
  const overridden = await owner.call('POST', `time/projects/${id}`, { rawBody: JSON.stringify({ name: 'Overridden', version: 2 }), query: { method: 'PATCH' } })
  t.equal(overridden.status, 200, overridden.text)
  t.equal((await read(`time/projects/${id}`)).name, 'Overridden', 'POST with method=PATCH')
  const batch = await client.request('POST', '/v1/batch', {
    tenant,
    query: { token: created.token },
    body: [
      { id: 'a', method: 'PATCH', path: `/v1/time/projects/${id}`, headers: 'Content-Type: application/merge-patch+json', body: JSON.stringify({ note: 'batched', version: 3 }) },
      { id: 'b', method: 'PATCH', path: `/v1/time/projects/${id}`, body: JSON.stringify({ name: 'stale', version: 3 }) },
    ],
  })
  t.equal(batch.status, 200, batch.text)
  t.same(
    batch.json.map((item: { code: number }) => item.code),
    [200, 409],
    'items answer as lone requests',
  )
  t.match(await read(`time/projects/${id}`), { note: 'batched', name: 'Overridden', version: 4 })
})

t.test('a body a PATCH does not take: 415 saying what it takes', async (t) => {
  const id = await project()
  const answer = await owner.call('PATCH', `time/projects/${id}`, { rawBody: '[{"op":"replace","path":"/name","value":"x"}]', headers: { 'content-type': 'application/json-patch+json' } })
  expectError(t, answer, 415, 'TL01-9005', 'a JSON Patch (RFC 6902)')
  t.match(answer.headers['accept-patch'], /application\/merge-patch\+json/)
  const onPost = await owner.call('POST', 'time/projects', { rawBody: '{"name":"x"}', headers: MERGE_PATCH })
  expectError(t, onPost, 415, 'TL01-9005', 'a merge patch is no create body')
  expectError(t, await patch(`time/projects/${id}`, ['not', 'an', 'object']), 400, 'TL01-1105', 'a patch that is no object')
  const onCollection = await patch('time/projects', { name: 'x' })
  t.equal(onCollection.status, 405, 'not on a collection')
  t.equal(onCollection.headers.allow, 'GET, POST')
})

t.test('the OpenAPI description names it', async (t) => {
  const doc = (await client.request('GET', '/v1/openapi.json')).json
  const operation = doc.paths['/time/projects/{id}'].patch
  t.ok(operation, 'PATCH /time/projects/{id}')
  t.same(Object.keys(operation.requestBody.content), ['application/merge-patch+json', 'application/json', 'application/xml'])
  t.same(operation.requestBody.content['application/merge-patch+json'].schema, { $ref: '#/components/schemas/ProjectInput' })
  t.ok(
    operation.parameters.some((parameter: { $ref?: string }) => parameter.$ref === '#/components/parameters/ifMatch'),
    'with If-Match',
  )
  t.notOk(doc.paths['/trash/{id}'].patch, 'not where PUT is not')
})
