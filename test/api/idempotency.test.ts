/*
 * Idempotency-Key on writes (http/keyedWrite.ts): a retry with the same key
 * and request answers the kept answer with `Idempotent-Replayed: true` and
 * writes nothing; the same key with another request is 422, while the first
 * is in flight 409; a 4xx is kept too, a 5xx is not; keys are the user's;
 * malformed keys are refused; the kept answers survive a restart and a
 * snapshot, expire after IDEMPOTENCY_KEY_LIFETIME_MS and are bounded per
 * tenant (IDEMPOTENCY_KEYS_PER_TENANT, the oldest first).
 */
import t from 'tap'
import { api, newUser, type Api } from '../helpers/api.js'
import type { TestResponse } from '../helpers/http.js'
import { activeActor, startInProcess, tempDataDir } from '../helpers/server.js'

const dataDir = tempDataDir('idempotency')
let server = await startInProcess(dataDir)
t.teardown(() => server.stop())
const TENANT = 'keys'
const { token } = await server.client.createTenant(TENANT)
let owner = api(server.client, TENANT, token)

const keyed = (as: Api, method: string, path: string, key: string, body?: unknown, query: Record<string, string> = {}): Promise<TestResponse> =>
  as.call(method, path, { body, query, headers: { 'Idempotency-Key': key } })
const projectsNamed = async (name: string): Promise<number> => (await owner.get('time/projects', { $filter: `name eq '${name}'` })).json.length as number

t.test('a retried create answers the first answer and stores one project', async (t) => {
  const first = await keyed(owner, 'POST', 'time/projects', 'create-1', { name: 'once' })
  t.equal(first.status, 201)
  t.equal(first.headers['idempotent-replayed'], undefined, 'the first answer is no replay')
  const again = await keyed(owner, 'POST', 'time/projects', 'create-1', { name: 'once' })
  t.equal(again.status, 201)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.text, first.text, 'the same body: the same id')
  t.equal(again.headers['content-type'], first.headers['content-type'])
  t.equal(await projectsNamed('once'), 1)
})

t.test('the same key with another request is 422; nothing is written', async (t) => {
  await keyed(owner, 'POST', 'time/projects', 'create-2', { name: 'two' })
  const otherBody = await keyed(owner, 'POST', 'time/projects', 'create-2', { name: 'two-changed' })
  t.equal(otherBody.status, 422)
  t.equal(otherBody.json.code, 'TL01-1113')
  const otherQuery = await keyed(owner, 'POST', 'time/projects', 'create-2', { name: 'two' }, { response_object: 'true' })
  t.equal(otherQuery.status, 422, 'the query is part of the request')
  const otherMethod = await keyed(owner, 'PUT', 'time/projects', 'create-2', { name: 'two' })
  t.equal(otherMethod.json.code, 'TL01-1113', 'so is the method')
  t.equal(await projectsNamed('two-changed'), 0)
  const renewedToken = await server.client.login(TENANT, 'owner@keys.test', 'secret-password')
  const withNewToken = await keyed(api(server.client, TENANT, renewedToken), 'POST', 'time/projects', 'create-2', { name: 'two' })
  t.equal(withNewToken.headers['idempotent-replayed'], 'true', 'a renewed token in the query is the same request')
})

t.test('a second request while the first is in flight is 409', async (t) => {
  const actor = activeActor(server, TENANT)
  if (actor === undefined) throw new Error('the tenant is not active')
  // The first request is held where it looks its key up (the tenant's next read), the tenant itself left free.
  let reached!: () => void
  const atGate = new Promise<void>((resolve) => (reached = resolve))
  let open!: () => void
  const gate = new Promise<void>((resolve) => (open = resolve))
  const read = actor.read.bind(actor)
  const gated = ((query: Parameters<typeof read>[0]) => {
    Reflect.deleteProperty(actor, 'read')
    reached()
    return gate.then(() => read(query))
  }) as typeof actor.read
  Object.assign(actor, { read: gated })
  t.teardown(() => Reflect.deleteProperty(actor, 'read'))
  const first = keyed(owner, 'POST', 'time/projects', 'flight', { name: 'in-flight' })
  await atGate
  const second = await keyed(owner, 'POST', 'time/projects', 'flight', { name: 'in-flight' })
  t.equal(second.status, 409)
  t.equal(second.json.code, 'TL01-1114')
  open()
  t.equal((await first).status, 201)
  const third = await keyed(owner, 'POST', 'time/projects', 'flight', { name: 'in-flight' })
  t.equal(third.headers['idempotent-replayed'], 'true', 'answered again once the first is done')
  t.equal(await projectsNamed('in-flight'), 1)
})

t.test('a refusal (4xx) is kept too and stores nothing', async (t) => {
  const refused = await keyed(owner, 'POST', 'time/projects', 'bad-1', { name: 'bad', code: 'x'.repeat(300) })
  t.equal(refused.status, 412)
  const again = await keyed(owner, 'POST', 'time/projects', 'bad-1', { name: 'bad', code: 'x'.repeat(300) })
  t.equal(again.status, 412)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.text, refused.text)
  t.equal(await projectsNamed('bad'), 0)
})

t.test('PUT, PATCH, DELETE and an action answer their first answer again', async (t) => {
  const id = await owner.create('time/projects', { name: 'target' })
  const put = await keyed(owner, 'PUT', `time/projects/${id}`, 'put-1', { name: 'target-2', version: 1 })
  t.equal(put.status, 200)
  const putAgain = await keyed(owner, 'PUT', `time/projects/${id}`, 'put-1', { name: 'target-2', version: 1 })
  t.equal(putAgain.status, 200, 'not 409 for the version the first request moved on')
  t.equal(putAgain.headers.etag, put.headers.etag, 'with the first answer’s ETag')
  const patch = await keyed(owner, 'PATCH', `time/projects/${id}`, 'patch-1', { note: 'patched', version: 2 })
  t.equal(patch.status, 200)
  const patchAgain = await keyed(owner, 'PATCH', `time/projects/${id}`, 'patch-1', { note: 'patched', version: 2 })
  t.equal(patchAgain.text, patch.text)
  const set = await keyed(owner, 'POST', `time/projects/${id}/$set`, 'set-1', { name: 'target-3' })
  const setAgain = await keyed(owner, 'POST', `time/projects/${id}/$set`, 'set-1', { name: 'target-3' })
  t.equal(setAgain.text, set.text)
  t.equal((await owner.get(`time/projects/${id}`)).json.version, 4, 'PUT, PATCH and $set each changed it once')
  const removed = await keyed(owner, 'DELETE', `time/projects/${id}`, 'del-1')
  t.equal(removed.status, 200)
  const removedAgain = await keyed(owner, 'DELETE', `time/projects/${id}`, 'del-1')
  t.equal(removedAgain.status, 200, 'not 404: the first answer')
  t.equal(removedAgain.headers['idempotent-replayed'], 'true')
})

t.test('one key for a whole batch', async (t) => {
  const items = [
    { id: 'a', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'batched' }) },
    { id: 'b', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'batched' }) },
  ]
  const first = await keyed(owner, 'POST', 'batch', 'batch-1', items)
  t.equal(first.status, 200)
  const again = await keyed(owner, 'POST', 'batch', 'batch-1', items)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.text, first.text)
  t.equal(await projectsNamed('batched'), 2)
  const malformed = await keyed(owner, 'POST', 'batch', 'batch-2', { not: 'a list' })
  t.equal(malformed.status, 400)
  const malformedAgain = await keyed(owner, 'POST', 'batch', 'batch-2', { not: 'a list' })
  t.equal(malformedAgain.headers['idempotent-replayed'], 'true', 'a batch refused before it ran is kept too')
})

t.test('keys are the user’s own', async (t) => {
  const other = await newUser(server.client, TENANT, owner, 'Keyholder', { role: 'ADMIN' })
  await keyed(owner, 'POST', 'time/projects', 'shared-key', { name: 'mine' })
  const theirs = await keyed(other.api, 'POST', 'time/projects', 'shared-key', { name: 'mine' })
  t.equal(theirs.status, 201)
  t.equal(theirs.headers['idempotent-replayed'], undefined, 'another user’s equal key is another key')
  t.equal(await projectsNamed('mine'), 2)
})

t.test('malformed keys and calls that take none get a clear 400', async (t) => {
  for (const [what, key] of [
    ['too long', 'k'.repeat(256)],
    ['empty', ''],
    ['only spaces', '   '],
    ['not ASCII', 'clé-1'],
  ] as const) {
    const refused = await owner.call('POST', 'time/projects', { body: { name: `hostile ${what}` }, headers: { 'Idempotency-Key': key } })
    t.equal(refused.status, 400, what)
    t.equal(refused.json.code, 'TL01-1112', what)
    t.match(refused.json.message, /Idempotency-Key/, what)
  }
  t.equal((await keyed(owner, 'POST', 'time/projects', 'k'.repeat(255), { name: 'longest key' })).status, 201, '255 characters are taken')
  t.equal(await projectsNamed('hostile too long'), 0)
  const signUp = await server.client.request('POST', '/v1/register/signup', { query: { apikey: server.client.apiKey }, body: {}, headers: { 'Idempotency-Key': 'x' } })
  t.equal(signUp.json.code, 'TL01-1112', 'a call without a signed-in user takes no key')
  const me = (await owner.get('users/@self')).json.id as string
  const upload = await owner.call('POST', `users/${me}/signature/upload`, { rawBody: 'png bytes', query: { filename: 's.png' }, headers: { 'content-type': 'image/png', 'Idempotency-Key': 'file-1' } })
  t.equal(upload.json.code, 'TL01-1112', 'a file’s upload takes no key')
  t.equal((await owner.get(`users/${me}/signature`)).status, 404, 'and stored nothing')
  const moved = await owner.call('POST', 'accounts/@own/$setUrlPrefix', { query: { urlPrefix: 'keys-moved' }, headers: { 'Idempotency-Key': 'move-1' } })
  t.equal(moved.json.code, 'TL01-1112', '$setUrlPrefix takes no key (it needs the tenant the keyed write holds)')
  const read = await owner.call('GET', 'time/projects', { headers: { 'Idempotency-Key': '' } })
  t.equal(read.status, 200, 'a read does not look at the header')
})

t.test('kept answers survive a restart and a snapshot', async (t) => {
  const first = await keyed(owner, 'POST', 'time/projects', 'durable-1', { name: 'durable' })
  await server.stop()
  server = await startInProcess(dataDir)
  owner = api(server.client, TENANT, token)
  const afterRestart = await keyed(owner, 'POST', 'time/projects', 'durable-1', { name: 'durable' })
  t.equal(afterRestart.headers['idempotent-replayed'], 'true', 'replayed from the log')
  t.equal(afterRestart.text, first.text)
  await activeActor(server, TENANT)?.snapshot()
  await server.stop()
  server = await startInProcess(dataDir)
  owner = api(server.client, TENANT, token)
  const afterSnapshot = await keyed(owner, 'POST', 'time/projects', 'durable-1', { name: 'durable' })
  t.equal(afterSnapshot.headers['idempotent-replayed'], 'true', 'loaded from the snapshot')
  t.equal(await projectsNamed('durable'), 1)
})

t.test('kept answers expire, and a tenant keeps at most IDEMPOTENCY_KEYS_PER_TENANT, the oldest going first', async (t) => {
  const small = await startInProcess(tempDataDir('idempotency-limits'), { IDEMPOTENCY_KEYS_PER_TENANT: '10', IDEMPOTENCY_KEY_LIFETIME_MS: '1500' })
  t.teardown(() => small.stop())
  const session = await small.client.createTenant('bounded')
  const as = api(small.client, 'bounded', session.token)
  for (let index = 1; index <= 11; index += 1) t.equal((await keyed(as, 'POST', 'time/projects', `k${index}`, { name: `p${index}` })).status, 201)
  const kept = activeActor(small, 'bounded')?.state.collection('KeptAnswer').size
  t.ok(kept !== undefined && kept <= 10, `at most 10 kept (${kept})`)
  t.equal((await keyed(as, 'POST', 'time/projects', 'k11', { name: 'p11' })).headers['idempotent-replayed'], 'true', 'the newest is kept')
  const oldest = await keyed(as, 'POST', 'time/projects', 'k1', { name: 'p1' })
  t.equal(oldest.headers['idempotent-replayed'], undefined, 'the oldest went first: a new write')
  await new Promise((resolve) => setTimeout(resolve, 1600))
  const expired = await keyed(as, 'POST', 'time/projects', 'k11', { name: 'p11' })
  t.equal(expired.headers['idempotent-replayed'], undefined, 'past its lifetime the key is free again')
  t.equal((await as.get('time/projects', { $filter: "name eq 'p11'" })).json.length, 2)
})
