/*
 * Uploaded files over HTTP: signature and logo upload, byte-exact download,
 * metadata, replace, delete, the file size limit (checked from
 * Content-Length and while streaming, independent of the body limit),
 * permissions, and files surviving a restart — from the snapshot written at
 * the clean stop, and from the log alone when no snapshot is left. Runs
 * through a cluster too (TIMELEDGER_TEST_CLUSTER=1): the bytes are then in
 * PostgreSQL and the tenant's actor on whichever node serves it; only the
 * checks of the embedded layout on disk (snapshot files) are left out.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import t from 'tap'
import { tenantSnapshotDir } from '../../src/persist/snapshotFile.js'
import { dateMs, expectError } from '../helpers/identity.js'
import type { TestResponse } from '../helpers/http.js'
import { activeActor, isTestCluster, startInProcess, type InProcessServer } from '../helpers/server.js'
import { addUser } from '../helpers/users.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const ENV = { MAX_FILE_BYTES: '1000', MAX_BODY_BYTES: '600' }
let server: InProcessServer = await startInProcess(undefined, ENV)
t.teardown(() => server.stop())
const { token: ownerToken, accountId } = await server.client.createTenant('acme')
const { token: otherTenantToken } = await server.client.createTenant('globex')
const bob = await addUser(server, 'acme', ownerToken, 'Bob')
const carol = await addUser(server, 'acme', ownerToken, 'Carol')
const ownerId = (await server.client.request('GET', `/v1/accounts/${accountId}`, { tenant: 'acme', query: { token: ownerToken } })).json.owner.id as string

/** Random bytes with runs of zero bytes in them. */
function binary(size: number): Buffer {
  const bytes = crypto.randomBytes(size)
  bytes.fill(0, 0, Math.min(3, size))
  bytes.fill(0, Math.floor(size / 2), Math.floor(size / 2) + 5)
  return bytes
}

function upload(path: string, token: string, bytes: Buffer, fileName: string | null = 'file.bin', contentType = 'image/png', extra: Record<string, string> = {}): Promise<TestResponse> {
  const query: Record<string, string> = { token, ...extra }
  if (fileName !== null) query.filename = fileName
  return server.client.request('POST', `/v1/${path}/upload`, { tenant: 'acme', query, rawBody: bytes, headers: { 'content-type': contentType } })
}
const call = (method: string, path: string, token: string, tenant = 'acme') => server.client.request(method, `/v1/${path}`, { tenant, query: { token } })
const storedBytes = (key: string) => server.service.services.registry.store.files.get(['acme', key])
/** The key of the current bytes of a file, as its metadata record holds it (an upload's own key). */
const fileKeyOf = (metadataId: string) => activeActor(server, 'acme')?.state.get('FileMetadata', metadataId)?.fileKey as string

t.test('signature: upload, metadata, download, replace, delete', async (t) => {
  const first = binary(700)
  const created = await upload('users/@self/signature', ownerToken, first, 'signature.png', 'image/png')
  t.equal(created.status, 201, 'above MAX_BODY_BYTES but within MAX_FILE_BYTES')
  t.match(created.json, { id: /^[0-9a-f-]{36}$/, version: 1 })

  const meta = await call('GET', 'users/@self/signature', ownerToken)
  t.equal(meta.status, 200)
  t.same(Object.keys(meta.json).sort(), ['contentSize', 'contentType', 'createdAt', 'displayName', 'fileName', 'id', 'updatedAt', 'version'])
  t.match(meta.json, { id: created.json.id, version: 1, fileName: 'signature.png', contentType: 'image/png', contentSize: 700, displayName: 'signature.png' })
  t.same((await call('GET', `users/${ownerId}/signature`, ownerToken)).json, meta.json, 'the id and @self name the same file')

  const download = await call('GET', 'users/@self/signature/download', ownerToken)
  t.equal(download.status, 200)
  t.ok(download.body.equals(first), 'byte for byte equal')
  t.equal(download.headers['content-type'], 'image/png')
  t.equal(download.headers['content-length'], '700')
  t.equal(download.headers['content-disposition'], 'attachment; filename="signature.png"')
  const firstKey = fileKeyOf(created.json.id as string)
  t.ok((await storedBytes(firstKey))?.equals(first), 'the bytes are in the files table')

  const second = binary(950)
  const replaced = await upload(`users/${ownerId}/signature`, ownerToken, second, 'neu "sig" ü.gif', 'image/gif', { response_object: 'true' })
  t.equal(replaced.status, 200, 'a replacement answers 200')
  t.match(replaced.json, { id: created.json.id, version: 2, fileName: 'neu "sig" ü.gif', contentType: 'image/gif', contentSize: 950 })
  t.equal(dateMs(replaced.json.createdAt), dateMs(meta.json.createdAt), 'createdAt kept')
  const again = await call('GET', 'users/@self/signature/download', ownerToken)
  t.ok(again.body.equals(second), 'the new bytes')
  t.equal(again.headers['content-type'], 'image/gif')
  t.equal(again.headers['content-length'], '950')
  t.equal(again.headers['content-disposition'], `attachment; filename="neu \\"sig\\" _.gif"; filename*=UTF-8''neu%20%22sig%22%20%C3%BC.gif`)
  const secondKey = fileKeyOf(created.json.id as string)
  t.not(secondKey, firstKey, 'a replacement has a key of its own')
  t.equal(await storedBytes(firstKey), undefined, 'and the replaced bytes are removed with it')

  const removed = await call('DELETE', 'users/@self/signature', ownerToken)
  t.equal(removed.status, 200)
  t.match(removed.json, { id: created.json.id, deleted: true })
  expectError(t, await call('GET', 'users/@self/signature', ownerToken), 404, 'TL01-1101', 'metadata gone')
  expectError(t, await call('GET', 'users/@self/signature/download', ownerToken), 404, 'TL01-1101', 'bytes gone')
  expectError(t, await call('DELETE', 'users/@self/signature', ownerToken), 404, 'TL01-1101', 'nothing to delete')
  t.equal(await storedBytes(secondKey), undefined, 'removed from the files table')

  const fresh = await upload('users/@self/signature', ownerToken, Buffer.from([0]), 'zero.bin', 'application/octet-stream')
  t.equal(fresh.status, 201, 'a new upload after a delete')
  t.equal(fresh.json.version, 1)
  t.ok((await call('GET', 'users/@self/signature/download', ownerToken)).body.equals(Buffer.from([0])), 'a single zero byte')
})

t.test('logo: @own and the account id', async (t) => {
  const bytes = binary(512)
  const created = await upload('accounts/@own/logo', ownerToken, bytes, 'logo.svg', 'image/svg+xml')
  t.equal(created.status, 201)
  const meta = await call('GET', `accounts/${accountId}/logo`, ownerToken)
  t.match(meta.json, { fileName: 'logo.svg', contentType: 'image/svg+xml', contentSize: 512, version: 1 })
  const download = await call('GET', `accounts/${accountId}/logo/download`, bob.token)
  t.ok(download.body.equals(bytes), 'any user reads the logo')
  t.equal(download.headers['content-disposition'], 'attachment; filename="logo.svg"')
  expectError(t, await call('GET', 'accounts/00000000-0000-4000-8000-000000000000/logo', ownerToken), 404, 'TL01-1101', 'another account id')
  expectError(t, await call('GET', 'accounts/@own/logo', otherTenantToken, 'globex'), 404, 'TL01-1101', 'another tenant has no logo')
  const noType = await server.client.request('POST', '/v1/accounts/@own/logo/upload', {
    tenant: 'acme',
    query: { token: ownerToken, filename: 'raw' },
    rawBody: bytes,
    headers: { 'content-type': '' },
  })
  t.equal(noType.status, 200)
  t.equal((await call('GET', 'accounts/@own/logo', ownerToken)).json.contentType, 'application/octet-stream', 'no Content-Type: octet-stream')
})

t.test('permissions', async (t) => {
  const bytes = binary(100)
  t.equal((await upload('users/@self/signature', bob.token, bytes)).status, 201, 'a user uploads their own signature')
  t.equal((await upload(`users/${bob.id}/signature`, bob.token, bytes)).status, 200, 'also by id')
  expectError(t, await upload(`users/${carol.id}/signature`, bob.token, bytes), 403, 'TL01-1008', "another user's signature")
  expectError(t, await upload(`users/${ownerId}/signature`, bob.token, bytes), 403, 'TL01-1008', "the owner's signature")
  expectError(t, await call('DELETE', `users/${ownerId}/signature`, bob.token), 403, 'TL01-1008', "deleting the owner's signature")
  expectError(t, await upload('accounts/@own/logo', bob.token, bytes), 403, 'TL01-1008', 'the logo')
  expectError(t, await call('DELETE', 'accounts/@own/logo', bob.token), 403, 'TL01-1008', 'deleting the logo')

  t.equal((await upload(`users/${carol.id}/signature`, ownerToken, bytes, 'by-owner.bin')).status, 201, "the owner sets anyone's signature")
  t.equal((await call('GET', `users/${carol.id}/signature`, bob.token)).json.fileName, 'by-owner.bin', 'anyone in the tenant reads it')
  t.ok((await call('GET', `users/${ownerId}/signature/download`, carol.token)).body.equals(Buffer.from([0])), "a user downloads the owner's signature")
  t.equal((await call('DELETE', `users/${bob.id}/signature`, ownerToken)).status, 200, "the owner removes anyone's signature")

  const admin = await addUser(server, 'acme', ownerToken, 'Ada', { admin: true })
  expectError(t, await upload(`users/${bob.id}/signature`, admin.token, bytes), 403, 'TL01-1008', 'an admin does not set the signature of another user')
  expectError(t, await upload(`users/${ownerId}/signature`, admin.token, bytes), 403, 'TL01-1008', "an admin does not replace the owner's signature")
  expectError(t, await call('DELETE', `users/${ownerId}/signature`, admin.token), 403, 'TL01-1008', "an admin does not remove the owner's signature")
  t.ok((await call('GET', `users/${ownerId}/signature/download`, admin.token)).body.equals(Buffer.from([0])), "the owner's signature is unchanged")
  t.equal((await upload('users/@self/signature', admin.token, bytes)).status, 201, 'an admin sets their own signature')
  t.equal((await upload('users/@self/signature', bob.token, bytes)).status, 201, 'the user sets their own again')
  t.equal((await upload('accounts/@own/logo', admin.token, bytes, 'admin-logo.png')).status, 200, 'an admin changes the logo')

  expectError(t, await call('GET', 'users/00000000-0000-4000-8000-000000000000/signature', ownerToken), 404, 'TL01-1101', 'unknown user')
  expectError(t, await call('GET', `users/${bob.id}/signature`, otherTenantToken, 'globex'), 404, 'TL01-1101', 'a user of another tenant')
  expectError(t, await server.client.request('GET', '/v1/users/@self/signature', { tenant: 'acme' }), 400, 'TL01-1002', 'no token')
})

t.test('the file size limit', async (t) => {
  t.equal((await upload('users/@self/signature', carol.token, binary(1000))).status, 200, 'exactly MAX_FILE_BYTES (replacing the one the owner set)')
  const over = await upload('users/@self/signature', carol.token, binary(1001))
  expectError(t, over, 413, 'TL01-1109', 'one byte more (Content-Length)')
  t.equal((await call('GET', 'users/@self/signature', carol.token)).json.contentSize, 1000, 'the stored file is unchanged')

  const streamed = await chunkedUpload('/v1/users/@self/signature/upload', carol.token, [binary(600), binary(600), binary(600), binary(600), binary(600)])
  t.equal(streamed.status, 413, 'a chunked body is cut off once it passes the limit')
  t.equal(JSON.parse(streamed.text).code, 'TL01-1109')
  t.ok(streamed.chunksSent < 5, `answered after ${streamed.chunksSent} of 5 chunks, without waiting for the rest`)
  const smallStream = await chunkedUpload('/v1/users/@self/signature/upload', carol.token, [binary(300), binary(300)])
  t.equal(smallStream.status, 200, 'a chunked upload within the limit')
  t.equal((await call('GET', 'users/@self/signature', carol.token)).json.contentSize, 600)

  const otherBody = await server.client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token: ownerToken }, rawBody: `{"name":"${'x'.repeat(700)}"}` })
  expectError(t, otherBody, 413, 'TL01-9006', 'other bodies keep MAX_BODY_BYTES')
})

t.test('bad uploads', async (t) => {
  expectError(t, await upload('users/@self/signature', bob.token, binary(10), null), 400, 'TL01-1105', 'no filename')
  expectError(t, await upload('users/@self/signature', bob.token, binary(10), '../etc/passwd'), 400, 'TL01-1105', 'a path as filename')
  expectError(t, await upload('users/@self/signature', bob.token, Buffer.alloc(0)), 400, 'TL01-1105', 'an empty file')
  expectError(t, await upload('users/@self/signature', bob.token, binary(10), 'f'.repeat(256)), 400, 'TL01-1105', 'a long filename')
  expectError(t, await call('PUT', 'users/@self/signature', bob.token), 405, 'TL01-9004', 'PUT')
  expectError(t, await call('GET', 'users/@self/signature/upload', bob.token), 405, 'TL01-9004', 'GET on upload')
  const batch = await server.client.request('POST', '/v1/batch', {
    tenant: 'acme',
    query: { token: bob.token },
    body: [
      { id: 'up', method: 'POST', path: '/v1/users/@self/signature/upload?filename=a.txt', headers: 'Content-Type: text/plain', body: 'hello' },
      { id: 'del', method: 'DELETE', path: '/v1/users/@self/signature' },
      { id: 'meta', method: 'GET', path: '/v1/users/@self/signature' },
    ],
  })
  t.equal(batch.status, 200)
  t.same(
    batch.json.map((item: { code: number }) => item.code),
    [400, 400, 200],
    'a batch may read files but not change them',
  )
})

t.test('files survive a restart: from the snapshot, and from the log alone', async (t) => {
  const bytes = binary(999)
  t.equal((await upload(`users/${bob.id}/signature`, bob.token, bytes, 'durable.bin', 'application/x-durable')).status, 200)
  const logo = (await call('GET', 'accounts/@own/logo/download', ownerToken)).body
  const meta = (await call('GET', `users/${bob.id}/signature`, ownerToken)).json

  const check = async (label: string) => {
    const download = await call('GET', `users/${bob.id}/signature/download`, ownerToken)
    t.equal(download.status, 200, `${label}: download`)
    t.ok(download.body.equals(bytes), `${label}: same bytes`)
    t.equal(download.headers['content-type'], 'application/x-durable', `${label}: content type`)
    t.same((await call('GET', `users/${bob.id}/signature`, ownerToken)).json, meta, `${label}: same metadata`)
    t.ok((await call('GET', 'accounts/@own/logo/download', ownerToken)).body.equals(logo), `${label}: the logo too`)
  }

  const dataDir = server.dataDir
  await server.stop()
  server = await startInProcess(dataDir, ENV)
  await check('after restart')
  // A cluster keeps its snapshots in PostgreSQL: the layout on disk checked below is the embedded mode's.
  if (isTestCluster(server)) return
  const recovery = server.service.services.registry.get('acme')?.lastRecovery
  t.not(recovery?.snapshotFile, null, 'the snapshot of the clean stop was loaded')
  t.equal(recovery?.replayedEntries, 0, 'nothing replayed')

  await server.stop()
  fs.rmSync(tenantSnapshotDir(dataDir, 'acme'), { recursive: true, force: true })
  server = await startInProcess(dataDir, ENV)
  await check('after replaying the log')
  const replay = server.service.services.registry.get('acme')?.lastRecovery
  t.equal(replay?.snapshotFile, null, 'no snapshot left')
  t.ok((replay?.replayedEntries ?? 0) > 0, 'rebuilt from the log')
})

/** An upload with Transfer-Encoding: chunked (no Content-Length), one write per chunk, pausing between them; stops writing once answered. */
function chunkedUpload(path: string, token: string, chunks: Buffer[]): Promise<{ status: number; text: string; chunksSent: number }> {
  let chunksSent = 0
  let answered = false
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port: server.service.port,
        method: 'POST',
        path: `${path}?token=${encodeURIComponent(token)}&filename=streamed.bin`,
        headers: { host: 'acme.localhost', 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
        agent: false,
      },
      (response) => {
        answered = true
        const parts: Buffer[] = []
        response.on('data', (part: Buffer) => parts.push(part))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8'), chunksSent }))
      },
    )
    request.on('error', (error) => {
      if (!answered) reject(error)
    })
    const writeNext = (index: number) => {
      if (answered) return
      if (index === chunks.length) {
        request.end()
        return
      }
      chunksSent += 1
      request.write(chunks[index], () => setTimeout(() => writeNext(index + 1), 50))
    }
    writeNext(0)
  })
}
