/*
 * Files and restores (src/domain/files.ts): every upload keeps its bytes
 * under a key of its own and removes the replaced version's bytes in the
 * same commit. After a restore to a point before a replacement, the
 * metadata of that point is back; its download answers 404 saying the
 * content is no longer kept, never the newer bytes under the older name and
 * size. A new upload works again, and a restore to the current version
 * downloads its bytes. A file uploaded once and never replaced comes back
 * whole.
 */
import crypto from 'node:crypto'
import t from 'tap'
import { adminRequest } from '../helpers/admin.js'
import { expectError } from '../helpers/identity.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'

const ADMIN_KEY = 'test-admin-key-files'
const server = await startInProcess(tempDataDir('files-restore'), { ADMIN_KEY, RATE_LIMIT_REQUESTS: '0' })
t.teardown(() => server.stop())
const { client, service } = server
const store = service.services.registry.store
const owner = await client.createTenant('acme')
let token = owner.token

function upload(bytes: Buffer, fileName: string, contentType: string) {
  return client.request('POST', '/v1/users/@self/signature/upload', { tenant: 'acme', query: { token, filename: fileName }, rawBody: bytes, headers: { 'content-type': contentType } })
}
const get = (path: string) => client.request('GET', `/v1/users/@self/${path}`, { tenant: 'acme', query: { token } })

async function restoreTo(seq: number): Promise<void> {
  const answer = await adminRequest(service.adminPort, 'POST', '/tenants/acme/restore', ADMIN_KEY, JSON.stringify({ toSeq: seq }))
  if (answer.status !== 200) throw new Error(`restore failed: ${answer.status} ${answer.text}`)
  // A restore ends every session.
  token = await client.login('acme', owner.email, owner.password)
}

t.test('a restore to before a replacement brings the metadata back and refuses the newer bytes', async (t) => {
  const first = crypto.randomBytes(100)
  const second = crypto.randomBytes(200)
  t.equal((await upload(first, 'v1.png', 'image/png')).status, 201)
  const afterFirst = store.lastSeq('acme')
  t.equal((await upload(second, 'v2.gif', 'image/gif')).status, 200)
  const afterSecond = store.lastSeq('acme')
  const current = await get('signature/download')
  t.ok(current.body.equals(second), 'the newest upload downloads')

  await restoreTo(afterFirst)
  t.match((await get('signature')).json, { fileName: 'v1.png', contentType: 'image/png', contentSize: 100 }, 'the metadata of the restore point')
  const refused = await get('signature/download')
  expectError(t, refused, 404, 'TL01-1101', 'the replaced bytes are not kept')
  t.match(refused.json.message, /no longer kept/)
  t.notOk(refused.body.includes(second), 'the newer bytes are never served under the older metadata')

  const third = crypto.randomBytes(150)
  t.equal((await upload(third, 'v3.png', 'image/png')).status, 200, 'uploading again works')
  const fresh = await get('signature/download')
  t.ok(fresh.body.equals(third), 'and downloads its own bytes')
  t.equal(fresh.headers['content-length'], '150')
  t.ok(afterSecond > afterFirst)
})

t.test('a file never replaced survives a restore whole', async (t) => {
  const logo = crypto.randomBytes(64)
  const uploaded = await client.request('POST', '/v1/accounts/@own/logo/upload', { tenant: 'acme', query: { token, filename: 'logo.png' }, rawBody: logo, headers: { 'content-type': 'image/png' } })
  t.equal(uploaded.status, 201)
  const point = store.lastSeq('acme')
  t.equal((await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, body: { name: 'after' } })).status, 201)
  await restoreTo(point)
  const downloaded = await client.request('GET', '/v1/accounts/@own/logo/download', { tenant: 'acme', query: { token } })
  t.equal(downloaded.status, 200)
  t.ok(downloaded.body.equals(logo), 'byte for byte')
})
