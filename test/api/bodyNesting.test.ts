/*
 * Bodies nest at most MAX_BODY_NESTING levels of objects and arrays (or XML
 * elements); past it, 400 TL01-1105 saying so, before anything recursive
 * reads the body. A batch item's body 100,000 objects deep once overflowed
 * the stack while the batch wrote it out again (500). Brackets inside
 * strings are text, and storage entries are text: neither is counted.
 */
import t from 'tap'
import { MAX_BODY_NESTING } from '../../src/http/body.js'
import { api } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const owner = await server.client.createTenant('nesting')
const a = api(server.client, 'nesting', owner.token)

const nestedObjects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`
const nestedArrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`
const postJson = (path: string, text: string) => a.call('POST', path, { rawBody: text, headers: { 'content-type': 'application/json' } })

t.test('a batch item body 100,000 objects deep is a 400', async (t) => {
  const response = await postJson('batch', `[{"id":"1","method":"POST","path":"/v1/time/projects","body":${nestedObjects(100_000)}}]`)
  t.equal(response.status, 400, response.text.slice(0, 200))
  t.equal(response.json.code, 'TL01-1105')
  t.match(response.json.message, `nests deeper than ${MAX_BODY_NESTING} levels`)
})

t.test('a JSON body past the bound is a 400 on every call that reads one', async (t) => {
  for (const text of [nestedObjects(100_000), nestedArrays(500_000), `{"name":"x","list":${nestedArrays(MAX_BODY_NESTING)}}`]) {
    const response = await postJson('time/projects', text)
    t.equal(response.status, 400)
    t.match(response.json.message, /nests deeper than/)
  }
  const project = await a.create('time/projects', { name: 'deep' })
  const update = await a.call('PUT', `time/projects/${project}`, { query: { version_ignore: true }, rawBody: nestedObjects(1000), headers: { 'content-type': 'application/json' } })
  t.equal(update.status, 400)
  t.match(update.json.message, /nests deeper than/)
})

t.test('a body at the bound is read as usual', async (t) => {
  const atBound = await postJson('time/projects', `{"name":"x","list":${nestedArrays(MAX_BODY_NESTING - 1)}}`)
  t.notMatch(atBound.json?.message ?? '', /nests deeper than/, atBound.text)
  const batch = await postJson('batch', JSON.stringify([{ id: '1', method: 'POST', path: '/v1/time/projects', body: { name: 'in a batch' } }]))
  t.equal(batch.status, 200)
  t.equal(batch.json[0].code, 201)
})

t.test('brackets inside strings are not nesting', async (t) => {
  const response = await postJson('time/projects', JSON.stringify({ name: `${'[{'.repeat(200)}"\\` }))
  t.equal(response.status, 201, response.text)
})

t.test('XML past the bound is a 400', async (t) => {
  const levels = MAX_BODY_NESTING + 5
  const response = await a.call('POST', 'time/projects', {
    rawBody: `<project><name>x</name>${'<a>'.repeat(levels)}1${'</a>'.repeat(levels)}</project>`,
    headers: { 'content-type': 'application/xml' },
  })
  t.equal(response.status, 400)
  t.equal(response.json.code, 'TL01-1105')
  t.match(response.json.message, /nests deeper than/)
})

t.test('a storage entry is text, however deep the JSON it holds', async (t) => {
  const text = nestedArrays(5000)
  const stored = await a.call('POST', 'storage/deep/entry', { rawBody: text, headers: { 'content-type': 'application/json' } })
  t.equal(stored.status, 201, stored.text)
  t.equal((await a.get('storage/deep/entry')).text, text)
})
