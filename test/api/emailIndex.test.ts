/*
 * The global e-mail index holds the truth: e-mail → every tenant with a live
 * (not trashed) user of it. Trashing the only user with an address frees it
 * (checkemail false, true again after restoring from the trash), a hard
 * delete frees it for good and sign-up may take it; two tenants with one
 * address both appear (findurl answers the first by name, the public
 * password request resets both users). A restart keeps all of it, and a
 * data directory whose index has the old `e-mail → tenant` layout (stale
 * entries, one tenant per e-mail) is rebuilt from the tenants at start-up.
 */
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { EmbeddedStorage } from '../../src/persist/embeddedStorage.js'
import type { TestClient } from '../helpers/http.js'
import { basic, loginRaw } from '../helpers/identity.js'
import { requestConfirmationByMail } from '../helpers/mail.js'
import { startInProcess, tempDataDir, testEnv } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const dataDir = tempDataDir('email-index')
let server = await startInProcess(dataDir)
t.teardown(() => server.stop())

const SOLO = 'solo@index.test'
const SHARED = 'shared@index.test'

async function checkEmail(client: TestClient, email: string): Promise<boolean> {
  const answer = await client.request('GET', '/v1/register/checkemail', { query: { apikey: client.apiKey, email } })
  if (answer.status !== 200) throw new Error(`checkemail failed: ${answer.status} ${answer.text}`)
  return answer.json.exists as boolean
}

async function findUrl(client: TestClient, email: string): Promise<string | null> {
  const answer = await client.request('GET', '/v1/register/findurl', { query: { apikey: client.apiKey, email } })
  if (answer.status !== 200) throw new Error(`findurl failed: ${answer.status} ${answer.text}`)
  return answer.json.url as string | null
}

async function makeUser(client: TestClient, tenant: string, token: string, email: string, password: string): Promise<string> {
  const made = await client.request('POST', '/v1/users', { tenant, query: { token }, body: { firstName: 'Sam', lastName: 'Same', email, password } })
  if (made.status !== 201) throw new Error(`user create failed: ${made.status} ${made.text}`)
  return made.json.id as string
}

/** The public two-step password change by e-mail; answers step 2's status. */
async function publicReset(client: TestClient, email: string, password: string): Promise<number> {
  const id = await requestConfirmationByMail(client, dataDir, email)
  const confirm = await client.request('POST', `/v1/auth/confirm/${id}`, { query: { apikey: client.apiKey }, headers: basic('', password) })
  return confirm.status
}

const alpha = await server.client.createTenant('alpha', 'owner@alpha.test')
const beta = await server.client.createTenant('beta', 'owner@beta.test')

t.test('trash frees an e-mail, restoring from the trash takes it again, a hard delete frees it', async (t) => {
  const { client } = server
  const id = await makeUser(client, 'alpha', alpha.token, SOLO, 'solo-password')
  t.equal(await checkEmail(client, SOLO), true, 'a live user: exists')
  const trashed = await client.request('DELETE', `/v1/users/${id}`, { tenant: 'alpha', query: { token: alpha.token } })
  t.equal(trashed.status, 200)
  t.equal(await checkEmail(client, SOLO), false, 'the only user with it is in the trash')
  t.equal(await findUrl(client, SOLO), null, 'findurl finds nothing')
  const restored = await client.request('GET', `/v1/trash/${trashed.json.trashItem.id as string}/$restore`, { tenant: 'alpha', query: { token: alpha.token } })
  t.equal(restored.status, 200, 'restored from the trash')
  t.equal(await checkEmail(client, SOLO), true, 'restored from the trash: exists again')
  const hard = await client.request('DELETE', `/v1/users/${id}`, { tenant: 'alpha', query: { token: alpha.token, hard: true } })
  t.equal(hard.status, 200, 'deleted for good')
  t.equal(await checkEmail(client, SOLO), false, 'hard-deleted while live: gone')

  const signup = await client.request('POST', '/v1/register/signup', {
    query: { apikey: client.apiKey },
    body: { account: { name: 'Gamma Ltd', urlPrefix: 'gamma' }, owner: { firstName: 'Sol', lastName: 'O', email: SOLO, password: 'gamma-password' } },
  })
  t.equal(signup.status, 201, "sign-up takes the deleted user's e-mail")
  t.match(await findUrl(client, SOLO), /^http:\/\/gamma\./, 'and findurl now names the new tenant')
})

t.test('removing a trashed user for good keeps the entry of a live user with the same e-mail', async (t) => {
  const { client } = server
  const first = await makeUser(client, 'beta', beta.token, 'twice@index.test', 'twice-password')
  const trashed = await client.request('DELETE', `/v1/users/${first}`, { tenant: 'beta', query: { token: beta.token } })
  t.equal(trashed.status, 200)
  await makeUser(client, 'beta', beta.token, 'twice@index.test', 'twice-password')
  t.equal(await checkEmail(client, 'twice@index.test'), true, 'a new live user took the trashed one’s e-mail')
  const emptied = await client.request('DELETE', `/v1/users/${first}`, { tenant: 'beta', query: { token: beta.token, hard: true } })
  t.equal(emptied.status, 200, 'the trashed one deleted for good')
  t.equal(await checkEmail(client, 'twice@index.test'), true, 'removing the trashed one for good does not drop the live one’s entry')
})

t.test('two tenants with one e-mail: both listed, both reset through the public request', async (t) => {
  const { client } = server
  await makeUser(client, 'beta', beta.token, SHARED, 'beta-old-password')
  await makeUser(client, 'alpha', alpha.token, SHARED, 'alpha-old-password')
  t.equal(await checkEmail(client, SHARED), true)
  t.match(await findUrl(client, SHARED), /^http:\/\/alpha\./, 'findurl answers the first tenant by name')
  t.equal(await publicReset(client, SHARED, 'both-new-password'), 200)
  t.equal((await loginRaw(client, 'alpha', SHARED, 'both-new-password')).status, 200, 'alpha’s user has the new password')
  t.equal((await loginRaw(client, 'beta', SHARED, 'both-new-password')).status, 200, 'beta’s user has the new password')
  t.equal((await loginRaw(client, 'beta', SHARED, 'beta-old-password')).status, 401, 'the old one is gone')
})

t.test('a restart keeps all of it', async (t) => {
  await server.stop()
  server = await startInProcess(dataDir)
  const { client } = server
  t.equal(await checkEmail(client, SHARED), true)
  t.equal(await checkEmail(client, 'twice@index.test'), true)
  t.match(await findUrl(client, SOLO), /^http:\/\/gamma\./)
  t.equal(await publicReset(client, SHARED, 'after-restart-password'), 200)
  t.equal((await loginRaw(client, 'alpha', SHARED, 'after-restart-password')).status, 200)
  t.equal((await loginRaw(client, 'beta', SHARED, 'after-restart-password')).status, 200)
})

t.test('a data directory with the old index layout is rebuilt at start-up', async (t) => {
  await server.stop()
  const store = EmbeddedStorage.open(dataDir, loadConfig(testEnv(dataDir)).lmdbMapSizeBytes)
  // What the old layout held: e-mail → the first tenant, never forgetting, and no layout marker.
  await store.emails.clearAsync()
  await store.confirmations.clearAsync()
  await store.emails.put(SHARED, 'beta')
  await store.emails.put('ghost@index.test', 'alpha')
  await store.close()
  server = await startInProcess(dataDir)
  const { client } = server
  t.equal(await checkEmail(client, 'ghost@index.test'), false, 'the stale entry is gone')
  t.match(await findUrl(client, SHARED), /^http:\/\/alpha\./, 'both tenants are back, alpha first')
  t.equal(await checkEmail(client, 'owner@beta.test'), true, 'an entry the old table lacked is there')
  t.equal(await publicReset(client, SHARED, 'rebuilt-index-password'), 200)
  t.equal((await loginRaw(client, 'alpha', SHARED, 'rebuilt-index-password')).status, 200)
  t.equal((await loginRaw(client, 'beta', SHARED, 'rebuilt-index-password')).status, 200)
})
