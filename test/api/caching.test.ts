/*
 * Validators and quotas over HTTP: ETag on objects and lists, If-None-Match
 * answered 304 with no body (also on a kept-alive connection), If-Match as
 * the version of a PUT, DELETE or $set (412 TL01-1110 when stale), and the
 * RateLimit-* headers on every authenticated answer, counting down to the
 * 429 with Retry-After.
 */
import http from 'node:http'
import t from 'tap'
import { api, newUser, ref } from '../helpers/api.js'
import { expectError } from '../helpers/identity.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const { token } = await client.createTenant('etag')
const owner = api(client, 'etag', token)

const clientId = await owner.create('time/clients', { name: 'Alpha Corp' })
const projectId = await owner.create('time/projects', { name: 'Apollo', client: ref(clientId) })

const etagOf = (response: { headers: http.IncomingHttpHeaders }) => response.headers.etag as string
const conditional = (path: string, tag: string, query: Record<string, string> = {}) => owner.call('GET', path, { query, headers: { 'if-none-match': tag } })

t.test('a single object: a strong tag led by its version, 304 while it holds', async (t) => {
  const first = await owner.get(`time/projects/${projectId}`)
  t.equal(first.status, 200)
  t.match(etagOf(first), /^"1-[A-Za-z0-9_-]{16}"$/, 'strong, version first')
  t.equal(etagOf(await owner.get(`time/projects/${projectId}`)), etagOf(first), 'the same tag for the same answer')

  const notModified = await conditional(`time/projects/${projectId}`, etagOf(first))
  t.equal(notModified.status, 304)
  t.equal(notModified.body.length, 0, 'no body')
  t.equal(notModified.headers.etag, etagOf(first), 'the tag again')
  t.equal(notModified.headers['content-length'], undefined, 'no Content-Length of an empty body')
  t.equal((await conditional(`time/projects/${projectId}`, `W/${etagOf(first)}`)).status, 304, 'weak comparison: W/ matches too')
  t.equal((await conditional(`time/projects/${projectId}`, `"x", ${etagOf(first)}`)).status, 304, 'one of several tags')
  t.equal((await conditional(`time/projects/${projectId}`, '*')).status, 304, '* matches an existing object')
  t.equal((await conditional(`time/projects/${projectId}`, '"1-somethingelse"')).status, 200, 'another tag: the object')
  const suppressed = await conditional(`time/projects/${projectId}`, etagOf(first), { suppress_response_code: 'true' })
  t.equal(suppressed.status, 200, 'suppress_response_code: always a body')
  t.equal(suppressed.json.id, projectId)
})

t.test('the tag follows the representation options', async (t) => {
  const tags = new Set<string>()
  const variants: Record<string, string>[] = [{}, { format: 'xml' }, { no_expand: 'true' }, { append: 'timerecords-count' }]
  for (const query of variants) {
    const answer = await owner.get(`time/projects/${projectId}`, query)
    if (answer.status !== 200) {
      t.fail(`${JSON.stringify(query)}: ${answer.status} ${answer.text}`)
      continue
    }
    tags.add(etagOf(answer))
    t.equal((await conditional(`time/projects/${projectId}`, etagOf(answer), query)).status, 304, `${JSON.stringify(query)}: its own tag matches`)
  }
  t.equal(tags.size, 4, 'format, no_expand and append each give their own tag')
  const json = etagOf(await owner.get(`time/projects/${projectId}`))
  t.equal((await conditional(`time/projects/${projectId}`, json, { format: 'xml' })).status, 200, "the JSON answer's tag does not match the XML one")
})

t.test('the tag changes with the object, and with what it embeds', async (t) => {
  const before = etagOf(await owner.get(`time/projects/${projectId}`))
  const renamed = await owner.call('PUT', `time/clients/${clientId}`, { body: { name: 'Alpha Corporation' }, query: { version_ignore: 'true' } })
  t.equal(renamed.status, 200)
  const afterClient = await conditional(`time/projects/${projectId}`, before)
  t.equal(afterClient.status, 200, 'the embedded client was renamed: the project answers again')
  t.equal(afterClient.json.version, 1, '… at the same version')
  t.not(etagOf(afterClient), before)
  t.match(etagOf(afterClient), /^"1-/, 'still led by version 1')

  const updated = await owner.put(`time/projects/${projectId}`, { name: 'Apollo 2', version: 1 })
  t.equal(updated.status, 200)
  t.match(etagOf(updated), /^"2-/, "the PUT's answer carries a tag of the new version")
  const read = await conditional(`time/projects/${projectId}`, etagOf(afterClient))
  t.equal(read.status, 200)
  t.match(etagOf(read), /^"2-/)
})

t.test('a list: a weak tag, 304 while nothing listed changed, a new tag when an item changes or comes', async (t) => {
  const path = 'time/projects'
  const first = await owner.get(path)
  t.match(etagOf(first), /^W\/"\d+-[A-Za-z0-9_-]{16}"$/, 'weak, sequence number first')
  const again = await conditional(path, etagOf(first))
  t.equal(again.status, 304)
  t.equal(again.body.length, 0)
  t.equal(again.headers.etag, etagOf(first))

  const filtered = await owner.get(path, { $filter: "name eq 'Apollo 2'" })
  t.not(etagOf(filtered), etagOf(first), 'another query, another tag')
  t.equal((await conditional(path, etagOf(first), { $filter: "name eq 'Apollo 2'" })).status, 200, "the unfiltered list's tag does not match the filtered list")
  t.not(etagOf(await owner.get(path, { format: 'xml' })), etagOf(first), 'another format, another tag')
  const otherAccept = await owner.call('GET', path, { headers: { accept: 'text/csv', 'if-none-match': etagOf(first) } })
  t.not(otherAccept.status, 304, "another Accept: never the JSON list's 304")

  const current = (await owner.get(`time/projects/${projectId}`)).json.version as number
  t.equal((await owner.put(`time/projects/${projectId}`, { name: 'Apollo 3', version: current })).status, 200)
  const afterChange = await conditional(path, etagOf(first))
  t.equal(afterChange.status, 200, 'an item changed: the list again')
  t.equal(afterChange.json.find((row: { id: string }) => row.id === projectId)?.name, 'Apollo 3')

  await owner.create('time/projects', { name: 'Borealis' })
  const afterAdd = await conditional(path, etagOf(afterChange))
  t.equal(afterAdd.status, 200, 'an item added: the list again')
  t.equal(afterAdd.json.length, afterChange.json.length + 1)
  t.equal((await conditional(path, etagOf(afterAdd))).status, 304, 'and 304 on its new tag')

  const other = await newUser(client, 'etag', owner, 'Uma')
  const asOther = await other.api.get(path)
  t.not(etagOf(asOther), etagOf(afterAdd), 'another caller, another tag')
  t.equal((await other.api.call('GET', path, { headers: { 'if-none-match': etagOf(afterAdd) } })).status, 200, "the owner's tag does not match another caller's list")
})

t.test('$count and summaries are tagged like lists; lists inside a batch are not', async (t) => {
  for (const path of ['time/projects/$count', 'time/projects/summary']) {
    const first = await owner.get(path)
    t.equal(first.status, 200, path)
    t.match(etagOf(first), /^W\/"/, `${path}: a weak tag`)
    t.equal((await conditional(path, etagOf(first))).status, 304, `${path}: 304 on it`)
  }
  const countTag = etagOf(await owner.get('time/projects/$count'))
  await owner.create('time/projects', { name: 'Counted' })
  const recount = await conditional('time/projects/$count', countTag)
  t.equal(recount.status, 200, 'a project added: counted again')

  const batch = await owner.post('batch', [
    { id: 'list', method: 'GET', path: '/v1/time/projects' },
    { id: 'one', method: 'GET', path: `/v1/time/projects/${projectId}` },
  ])
  t.equal(batch.status, 200)
  const [list, one] = batch.json as { code: number; headers: string }[]
  t.equal(list?.code, 200)
  t.notMatch(list?.headers ?? '', /ETag/i, "a batch item's list has no tag (the batch's writes move no sequence number)")
  t.match(one?.headers ?? '', /ETag: "\d+-/, 'a single object in a batch has its tag')
})

t.test('304 on a kept-alive connection leaves it usable', async (t) => {
  const tag = etagOf(await owner.get(`time/projects/${projectId}`))
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const sockets = new Set<unknown>()
  const get = (headers: Record<string, string>) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(
        { host: '127.0.0.1', port: server.service.port, path: `/v1/time/projects/${projectId}?token=${token}`, headers: { host: 'etag.localhost', ...headers }, agent },
        (response) => {
          sockets.add(response.socket)
          let body = ''
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => (body += chunk))
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
        },
      )
      request.on('error', reject)
      request.end()
    })
  t.equal((await get({ 'if-none-match': tag })).status, 304)
  const after = await get({})
  t.equal(after.status, 200, 'the next answer on the same connection')
  t.equal(JSON.parse(after.body).id, projectId)
  t.equal((await get({ 'if-none-match': tag })).status, 304)
  t.equal(sockets.size, 1, 'one connection for all three')
})

t.test('If-Match: the version of a PUT, DELETE or $set', async (t) => {
  const id = await owner.create('time/projects', { name: 'Conditional' })
  const v1 = etagOf(await owner.get(`time/projects/${id}`))

  const withoutVersion = await owner.call('PUT', `time/projects/${id}`, { body: { name: 'Changed' }, headers: { 'if-match': v1 } })
  t.equal(withoutVersion.status, 200, 'If-Match stands for the body version')
  t.equal(withoutVersion.json.version, 2)

  const stale = await owner.call('PUT', `time/projects/${id}`, { body: { name: 'Lost update' }, headers: { 'if-match': v1 } })
  expectError(t, stale, 412, 'TL01-1110', 'a stale tag')
  t.match(stale.json.message, /at version 2; If-Match names version 1/)
  t.equal((await owner.get(`time/projects/${id}`)).json.name, 'Changed', 'the stale PUT changed nothing')

  const v2 = etagOf(await owner.get(`time/projects/${id}`))
  expectError(t, await owner.call('PUT', `time/projects/${id}`, { body: { name: 'x' }, headers: { 'if-match': '"not-a-version"' } }), 412, 'TL01-1110', 'a tag with no version')
  const bothGiven = await owner.call('PUT', `time/projects/${id}`, { body: { name: 'x', version: 1 }, headers: { 'if-match': v2 } })
  expectError(t, bothGiven, 409, 'TL01-1107', 'a stale body version is still refused')
  const bare = await owner.call('PUT', `time/projects/${id}`, { body: { name: 'Bare' }, headers: { 'if-match': '"2"' } })
  t.equal(bare.status, 200, 'a bare "<version>" is a version too')
  const any = await owner.call('PUT', `time/projects/${id}`, { body: { name: 'Any' }, headers: { 'if-match': '*' } })
  t.equal(any.status, 200, '* takes any version')
  t.equal(any.json.version, 4)

  const setStale = await owner.call('POST', `time/projects/${id}/$set`, { query: { name: 'Set' }, headers: { 'if-match': v2 } })
  expectError(t, setStale, 412, 'TL01-1110', '$set with a stale tag')
  const v4 = etagOf(any)
  const setRight = await owner.call('POST', `time/projects/${id}/$set`, { query: { name: 'Set' }, headers: { 'if-match': `"9", ${v4}` } })
  t.equal(setRight.status, 200, 'one of several tags matches')
  t.match(etagOf(setRight), /^"5-/, '$set answers the tag of the new version')

  expectError(t, await owner.call('DELETE', `time/projects/${id}`, { headers: { 'if-match': v4 } }), 412, 'TL01-1110', 'DELETE with a stale tag')
  t.equal((await owner.get(`time/projects/${id}`)).status, 200, 'still there')
  const deleted = await owner.call('DELETE', `time/projects/${id}`, { headers: { 'if-match': etagOf(setRight) } })
  t.equal(deleted.status, 200, 'DELETE at the right version')
  t.equal((await owner.get(`time/projects/${id}`)).status, 404)

  expectError(t, await owner.call('PUT', `time/projects/${projectId}`, { body: { name: 'x' }, headers: { 'if-match': `"1", `.repeat(500) } }), 400, 'TL01-1105', 'an If-Match too long to read')
  const missing = await owner.call('PUT', 'time/projects/no-such-id', { body: { name: 'x' }, headers: { 'if-match': '"1"' } })
  expectError(t, missing, 404, 'TL01-1101', 'an object that is not there is not found, whatever the tag')
})

t.test('RateLimit headers on every authenticated answer', async (t) => {
  const read = await owner.get(`time/projects/${projectId}`)
  t.equal(read.headers['ratelimit-limit'], '500', 'the default limit')
  t.equal(read.headers['ratelimit-policy'], '500;w=10')
  t.match(read.headers['ratelimit-reset'], /^\d+$/)
  const notFound = await owner.get('time/projects/no-such-id')
  t.equal(notFound.status, 404)
  t.ok(notFound.headers['ratelimit-remaining'], 'an error after authentication carries them too')
  const publicCall = await client.request('GET', '/v1/register/checkurl', { query: { apikey: client.apiKey, url: 'free' } })
  t.equal(publicCall.status, 200)
  t.equal(publicCall.headers['ratelimit-limit'], undefined, 'no quota on an answer without a caller')
})

t.test('RateLimit-Remaining counts down to the 429', async (t) => {
  const limited = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '4', RATE_LIMIT_WINDOW_MS: '60000' })
  t.teardown(() => limited.stop())
  const { token: limitedToken } = await limited.client.createTenant('quota')
  const caller = api(limited.client, 'quota', limitedToken)
  const remaining: string[] = []
  for (let index = 0; index < 4; index += 1) {
    const answer = await caller.get('users/@self')
    t.equal(answer.status, 200)
    t.equal(answer.headers['ratelimit-limit'], '4')
    t.equal(answer.headers['ratelimit-policy'], '4;w=60')
    const reset = Number(answer.headers['ratelimit-reset'])
    t.ok(reset > 0 && reset <= 60, `reset within the window (${reset} s)`)
    remaining.push(answer.headers['ratelimit-remaining'] as string)
  }
  t.same(remaining, ['3', '2', '1', '0'], 'one less each time')
  const refused = await caller.get('users/@self')
  expectError(t, refused, 429, 'TL01-9010', 'past the limit')
  t.equal(refused.headers['ratelimit-remaining'], '0')
  t.equal(refused.headers['ratelimit-limit'], '4')
  t.match(refused.headers['retry-after'], /^\d+$/)
  t.equal(refused.headers['retry-after'], refused.headers['ratelimit-reset'], 'Retry-After and Reset agree')
})
