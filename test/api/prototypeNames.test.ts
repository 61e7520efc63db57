/*
 * Names from a request are looked up in tables of the server: report
 * names, actions, views, resources, inner collections, fields, summary
 * functions, formats, storage groups, tenants, query options. A lookup
 * in a plain object finds the names every object inherits
 * (`constructor`, `__proto__`, `toString`…): `GET time/reports/constructor`
 * once called `Object` as a report and stopped the process. This test
 * puts every name of Object.prototype (and a few of Function.prototype)
 * in every place a request can carry a name, against a server in a child
 * process: each answer is a 4xx with the error body (or, where any name
 * is a valid user-chosen key, a 2xx that round-trips), none is a 5xx,
 * and the process serves on afterwards.
 */
import t, { type Test } from 'tap'
import { api } from '../helpers/api.js'
import type { TestResponse } from '../helpers/http.js'
import { killHard, spawnServer, tempDataDir } from '../helpers/server.js'

const NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype', 'length', 'name', 'call', 'apply', 'bind', 'then', 'toJSON']

const server = await spawnServer(tempDataDir('prototype-names'), { RATE_LIMIT_REQUESTS: '0' })
t.teardown(() => killHard(server))
const owner = await server.client.createTenant('probe')
const a = api(server.client, 'probe', owner.token)
const project = await a.create('time/projects', { name: 'Probe project' })
await a.create('time/timerecords', { project: { id: project }, start: '/Date(1700000000000)/', end: '/Date(1700003600000)/', description: 'probe' })

interface Probe {
  label: string
  send: (name: string) => Promise<TestResponse>
  /** Any name is a valid key here (a 2xx is right); otherwise a 4xx. */
  anyNameValid?: boolean
}

const get = (path: string) => (name: string) => a.get(path.replaceAll('NAME', name))
const getQuery = (path: string, query: (name: string) => Record<string, string>) => (name: string) => a.get(path.replaceAll('NAME', name), query(name))
const enc = encodeURIComponent

const PROBES: Probe[] = [
  { label: 'report name', send: get('time/reports/NAME') },
  { label: 'report grouping', send: getQuery('time/reports/readtotals', (name) => ({ summary: name })) },
  { label: 'report grouping path', send: getQuery('time/reports/groupedtotals', (name) => ({ summary: `${name}/id` })) },
  { label: 'report range', send: getQuery('time/reports/singletotals', (name) => ({ range: name })) },
  { label: 'report slice', send: getQuery('time/reports/singleslices', (name) => ({ range: '365', slice_by: name })) },
  { label: 'collection action', send: get('time/projects/$NAME') },
  { label: 'view', send: get('time/projects/@NAME') },
  { label: 'object action', send: (name) => a.post(`time/projects/${project}/$${name}`) },
  { label: 'object action (GET)', send: get(`time/projects/${project}/$NAME`) },
  { label: 'inner collection', send: get(`time/projects/${project}/NAME`) },
  { label: 'object id', send: get('time/projects/NAME') },
  { label: 'resource under time', send: get('time/NAME') },
  { label: 'top-level resource', send: get('NAME') },
  { label: 'nested unknown path', send: get('NAME/NAME/NAME') },
  { label: '$metadata of unknown', send: get('NAME/$metadata') },
  { label: 'filter field', send: getQuery('time/projects', (name) => ({ $filter: `${name} eq 1` })) },
  { label: 'filter path', send: getQuery('time/timerecords', (name) => ({ $filter: `project/${name} eq 'x'` })) },
  { label: 'filter reference path', send: getQuery('time/timerecords', (name) => ({ $filter: `${name}/id eq 'x'` })) },
  { label: 'filter function', send: getQuery('time/projects', (name) => ({ $filter: `${name}(name) eq 1` })) },
  { label: 'count filter', send: getQuery('time/projects/$count', (name) => ({ $filter: `${name} eq 1` })) },
  { label: 'orderby', send: getQuery('time/projects', (name) => ({ $orderby: name })) },
  { label: 'orderby path', send: getQuery('time/timerecords', (name) => ({ $orderby: `project/${name}` })) },
  { label: 'format', send: getQuery('time/projects', (name) => ({ $format: name })) },
  { label: 'append', send: getQuery('time/projects', (name) => ({ append: name })) },
  { label: 'query option name', send: getQuery('time/projects', (name) => ({ [name]: '1' })) },
  { label: 'summary function', send: getQuery('time/timerecords/summary', (name) => ({ summary: `${name}()` })) },
  { label: 'summary field', send: getQuery('time/timerecords/summary', (name) => ({ summary: `sum(${name})` })) },
  { label: 'summary grouping', send: getQuery('time/timerecords/summary', (name) => ({ summary: `${name};count()` })) },
  { label: 'create with the name as a field', send: (name) => a.post('time/projects', { name: 'x', [name]: 1 }) },
  { label: 'create with the name as an object field', send: (name) => a.post('time/projects', JSON.parse(`{"name":"x","${name}":{"id":"y"}}`)) },
  { label: 'create with the name as a reference', send: (name) => a.post('time/tasks', { name: 'x', project: JSON.parse(`{"${name}":"y"}`) }) },
  {
    label: 'XML element',
    send: (name) => a.call('POST', 'time/projects', { rawBody: `<project><name>x</name><${name}>1</${name}></project>`, headers: { 'content-type': 'application/xml' } }),
  },
  { label: 'update with the name as a field', send: (name) => a.put(`time/projects/${project}`, { [name]: 1 }, { version_ignore: true }) },
  { label: '$set of the name', send: (name) => a.post(`time/projects/${project}/$set`, undefined, { [name]: '1' }) },
  { label: 'method override', send: (name) => a.call('POST', 'time/projects', { query: { method: name }, body: { name: 'x' } }) },
  { label: 'accept header', send: (name) => a.call('GET', 'time/projects', { headers: { accept: `application/${name}` } }) },
  { label: 'content type', send: (name) => a.call('POST', 'time/projects', { rawBody: '{"name":"x"}', headers: { 'content-type': `application/${name}` } }) },
  { label: 'user signature', send: get('users/NAME/signature') },
  { label: 'account logo', send: get('accounts/NAME/logo') },
  { label: 'secret key', send: (name) => a.del(`users/@self/secretkeys/${enc(name)}`) },
  { label: 'confirmation id', send: (name) => server.client.request('POST', `/v1/auth/confirm/${enc(name)}`, { tenant: 'probe', query: { apikey: server.client.apiKey } }) },
  {
    label: 'login name',
    send: (name) =>
      server.client.request('GET', '/v1/auth/login', { tenant: 'probe', query: { apikey: server.client.apiKey }, headers: { authorization: `Basic ${Buffer.from(`${name}:x`).toString('base64')}` } }),
  },
  { label: 'tenant', send: (name) => server.client.request('GET', '/v1/users/@self', { tenant: name.toLowerCase(), query: { token: owner.token } }) },
  { label: 'public checkurl', send: (name) => server.client.request('GET', '/v1/register/checkurl', { tenant: null, query: { apikey: server.client.apiKey, url: name } }) },
  { label: 'public checkemail', send: (name) => server.client.request('GET', '/v1/register/checkemail', { tenant: null, query: { apikey: server.client.apiKey, email: name } }) },
  { label: 'public findurl', send: (name) => server.client.request('GET', '/v1/register/findurl', { tenant: null, query: { apikey: server.client.apiKey, email: name } }) },
  { label: 'public path', send: (name) => server.client.request('GET', `/v1/register/${name}`, { tenant: null, query: { apikey: server.client.apiKey } }) },
  { label: 'batch item path', send: (name) => a.post('batch', [{ id: '1', method: 'GET', path: `/v1/time/reports/${name}` }]) },
  { label: 'batch item method', send: (name) => a.post('batch', [{ id: '1', method: name, path: '/v1/time/projects' }]) },
  { label: 'batch item field', send: (name) => a.post('batch', [JSON.parse(`{"id":"1","method":"GET","path":"/v1/time/projects","${name}":{}}`)]) },
  { label: 'storage group', send: get('storage/NAME') },
  { label: 'storage group and key', send: (name) => a.call('POST', `storage/${name}/${name}`, { rawBody: `stored ${name}`, headers: { 'content-type': 'text/plain' } }), anyNameValid: true },
  { label: 'storage scope', send: get('storage/group/key/NAME') },
]

/** 2xx where any name is a valid key; a 4xx with the error body elsewhere; never a 5xx. */
function checkAnswer(t: Test, probe: Probe, name: string, response: TestResponse): void {
  const where = `${probe.label} '${name}': ${response.status} ${response.text.slice(0, 200)}`
  t.ok(response.status < 500, where)
  if (probe.anyNameValid === true) return
  if (response.status >= 400) t.match(response.json ?? {}, { status: response.status, code: /^TL01-/ }, `${where} has the error body`)
}

for (const probe of PROBES) {
  t.test(probe.label, async (t) => {
    for (const name of NAMES) checkAnswer(t, probe, name, await probe.send(name))
  })
}

t.test('storage keeps an entry under every such name and gives it back', async (t) => {
  for (const name of NAMES) {
    const read = await a.get(`storage/${name}/${name}`)
    t.equal(read.status, 200, `storage/${name}/${name}`)
    t.equal(read.text, `stored ${name}`)
  }
})

t.test('the process serves on', async (t) => {
  t.equal(server.child.exitCode, null, 'still running')
  t.equal((await a.get('time/projects/$count')).status, 200)
})
