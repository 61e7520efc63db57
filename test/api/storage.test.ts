/*
 * The key/value text storage over HTTP: private entries per user, public
 * entries per tenant, overwrite, delete, the 16384-character limit counted
 * in code points, content types kept, name and scope validation, and
 * entries surviving a restart (they are tenant state).
 */
import t from 'tap'
import { expectError } from '../helpers/identity.js'
import { startInProcess } from '../helpers/server.js'
import { addUser } from '../helpers/users.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

let server = await startInProcess()
t.teardown(() => server.stop())
const { token: ownerToken } = await server.client.createTenant('acme')
const { token: otherTenantToken } = await server.client.createTenant('globex')
const bob = await addUser(server, 'acme', ownerToken, 'Bob')

function store(path: string, token: string, text: string | Buffer, contentType = 'text/plain', tenant = 'acme') {
  return server.client.request('POST', `/v1/storage/${path}`, { tenant, query: { token }, rawBody: text, headers: { 'content-type': contentType } })
}
const get = (path: string, token: string, tenant = 'acme') => server.client.request('GET', `/v1/storage/${path}`, { tenant, query: { token } })
const del = (path: string, token: string) => server.client.request('DELETE', `/v1/storage/${path}`, { tenant: 'acme', query: { token } })

t.test('private entries belong to their user', async (t) => {
  const created = await store('prefs/theme', ownerToken, '{"dark":true}', 'application/json')
  t.equal(created.status, 201)
  t.match(created.json, { id: /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, version: 1 })
  const own = await get('prefs/theme', ownerToken)
  t.equal(own.status, 200)
  t.equal(own.text, '{"dark":true}')
  t.equal(own.headers['content-type'], 'application/json')
  t.same((await get('prefs/theme/private', ownerToken)).text, '{"dark":true}', 'private is the default scope')

  expectError(t, await get('prefs/theme', bob.token), 404, 'TL01-1101', 'another user')
  expectError(t, await get('prefs/theme/public', bob.token), 404, 'TL01-1101', 'not public')
  t.same((await get('prefs', bob.token)).json, [], 'not listed for another user')
  expectError(t, await del('prefs/theme', bob.token), 404, 'TL01-1101', 'another user cannot delete it')

  t.equal((await store('prefs/theme', bob.token, 'light')).status, 201, 'the same key is a separate entry for bob')
  t.equal((await get('prefs/theme', bob.token)).text, 'light')
  t.equal((await get('prefs/theme', ownerToken)).text, '{"dark":true}', 'the owner still sees their own')
  t.not((await store('prefs/theme', bob.token, 'light')).json.id, created.json.id, 'different ids')

  expectError(t, await get('prefs/theme', otherTenantToken, 'globex'), 404, 'TL01-1101', 'another tenant')
})

t.test('public entries are shared by the tenant', async (t) => {
  t.equal((await store('board/motd', ownerToken, 'Hello all', 'text/plain; charset=utf-8')).status, 201)
  const seen = await get('board/motd/public', ownerToken)
  t.equal(seen.status, 404, 'not yet: stored as private')
  t.equal((await store('board/motd/public', ownerToken, 'Hello team', 'text/markdown')).status, 201)
  const bobSees = await get('board/motd/public', bob.token)
  t.equal(bobSees.status, 200)
  t.equal(bobSees.text, 'Hello team')
  t.equal(bobSees.headers['content-type'], 'text/markdown')
  t.equal((await store('board/news/public', bob.token, '{}', 'application/json')).status, 201, 'any user may write public entries')
  t.equal((await store('board/a-first', bob.token, 'mine')).status, 201)

  const ownerList = await get('board', ownerToken)
  t.same(
    ownerList.json,
    [
      { itemKey: 'motd', publicScope: false, contentType: 'text/plain; charset=utf-8' },
      { itemKey: 'motd', publicScope: true, contentType: 'text/markdown' },
      { itemKey: 'news', publicScope: true, contentType: 'application/json' },
    ],
    'own private and all public entries, sorted by key',
  )
  const bobList = await get('board', bob.token)
  t.same(
    bobList.json.map((entry: { itemKey: string }) => entry.itemKey),
    ['a-first', 'motd', 'news'],
  )
  t.same((await get('board', ownerToken, 'acme')).json.length, 3)
  t.same(
    (await server.client.request('GET', '/v1/storage/board', { tenant: 'acme', query: { token: ownerToken, $top: 1, $skip: 1 } })).json,
    [{ itemKey: 'motd', publicScope: true, contentType: 'text/markdown' }],
    '$top and $skip page the list',
  )
  t.same((await get('board', otherTenantToken, 'globex')).json, [], 'public means this tenant only')
})

t.test('overwrite and delete', async (t) => {
  t.equal((await store('notes/n1', ownerToken, 'first', 'text/plain')).status, 201)
  const second = await store('notes/n1', ownerToken, '{"second":2}', 'application/json')
  t.equal(second.status, 200, 'a second store replaces')
  t.equal(second.json.version, 2)
  const read = await get('notes/n1', ownerToken)
  t.equal(read.text, '{"second":2}')
  t.equal(read.headers['content-type'], 'application/json', 'the new content type')
  t.equal((await get('notes', ownerToken)).json.length, 1, 'still one entry')

  const removed = await del('notes/n1', ownerToken)
  t.equal(removed.status, 200)
  t.match(removed.json, { id: second.json.id, deleted: true })
  expectError(t, await get('notes/n1', ownerToken), 404, 'TL01-1101', 'gone')
  expectError(t, await del('notes/n1', ownerToken), 404, 'TL01-1101', 'absent')
  t.same((await get('notes', ownerToken)).json, [])

  t.equal((await store('notes/n1/public', ownerToken, 'pub')).status, 201)
  expectError(t, await del('notes/n1/private', ownerToken), 404, 'TL01-1101', 'the private one is absent')
  t.equal(
    (await server.client.request('POST', '/v1/storage/notes/n1/public', { tenant: 'acme', query: { token: bob.token, method: 'DELETE' } })).status,
    200,
    'anyone removes a public entry (method override)',
  )
  expectError(t, await get('notes/n1/public', ownerToken), 404, 'TL01-1101')
})

t.test('the size limit counts characters, not bytes', async (t) => {
  for (const char of ['a', 'é', '€', '😀']) {
    const fits = char.repeat(16384)
    const stored = await store('limits/fits', ownerToken, fits, 'text/plain; charset=utf-8')
    t.equal(stored.status, stored.json?.version === 1 ? 201 : 200, `16384 × '${char}' (${Buffer.byteLength(fits)} bytes) is stored`)
    const read = await get('limits/fits', ownerToken)
    t.equal(read.text, fits, `16384 × '${char}' reads back the same`)
    const over = await store('limits/over', ownerToken, char.repeat(16385))
    expectError(t, over, 412, 'TL01-9002', `16385 × '${char}'`)
    t.match(over.json.message, /16384 characters, this one has 16385/)
  }
  expectError(t, await get('limits/over', ownerToken), 404, 'TL01-1101', 'nothing stored past the limit')
  t.equal((await store('limits/empty', ownerToken, '')).status, 201, 'an empty text is an entry')
  t.equal((await get('limits/empty', ownerToken)).text, '')
})

t.test('content is kept byte for byte with its content type', async (t) => {
  const text = '\uFEFFline 1\r\nline 2\n\ttabs, "quotes", <xml/> & 日本語 \u0000 end'
  t.equal((await store('kept/text', ownerToken, text, 'application/x-custom+json; charset=utf-8; v=2')).status, 201)
  const read = await get('kept/text', ownerToken)
  t.ok(read.body.equals(Buffer.from(text, 'utf8')), 'same bytes (BOM and NUL included)')
  t.equal(read.headers['content-type'], 'application/x-custom+json; charset=utf-8; v=2')
  const bare = await server.client.request('POST', '/v1/storage/kept/bare', { tenant: 'acme', query: { token: ownerToken }, rawBody: 'x', headers: { 'content-type': '' } })
  t.equal(bare.status, 201)
  t.equal((await get('kept/bare', ownerToken)).headers['content-type'], 'text/plain; charset=utf-8', 'no content type: text/plain')
})

t.test('bad input', async (t) => {
  expectError(t, await store('bad/utf8', ownerToken, Buffer.from([0x61, 0xff, 0xfe, 0x62])), 400, 'TL01-1105', 'invalid UTF-8')
  expectError(t, await store('bad/utf8', ownerToken, Buffer.from([0xed, 0xa0, 0x80])), 400, 'TL01-1105', 'an encoded surrogate')
  expectError(t, await store('bad/key/shared', ownerToken, 'x'), 400, 'TL01-1105', 'unknown scope')
  const badScope = await store('bad/key/PUBLIC', ownerToken, 'x')
  t.match(badScope.json.message, /scope 'PUBLIC' is invalid/)
  expectError(t, await store('bad/has%20space', ownerToken, 'x'), 400, 'TL01-1105', 'space in key')
  expectError(t, await store('b%40d/key', ownerToken, 'x'), 400, 'TL01-1105', '@ in group')
  expectError(t, await get('b%2Fd', ownerToken), 400, 'TL01-1105', 'slash in group')
  expectError(t, await store(`bad/${'k'.repeat(129)}`, ownerToken, 'x'), 400, 'TL01-1105', '129 characters')
  t.equal((await store(`g.${'g'.repeat(126)}/${'k'.repeat(128)}`, ownerToken, 'x')).status, 201, '128 characters are fine')
  const message = (await store('bad/k%C3%A9y', ownerToken, 'x')).json.message as string
  t.match(message, /storage key 'kéy' is invalid: use 1 to 128 characters/, 'the message names the rule')
  const batch = await server.client.request('POST', '/v1/batch', {
    tenant: 'acme',
    query: { token: ownerToken },
    body: [{ id: 'ct', method: 'POST', path: '/v1/storage/bad/ct', headers: 'Content-Type: text/plain\u00e9', body: 'x' }],
  })
  t.equal(batch.json[0].code, 400, 'a content type that could not be sent back as a header is refused')
  expectError(t, await server.client.request('PUT', '/v1/storage/bad/key', { tenant: 'acme', query: { token: ownerToken }, rawBody: 'x' }), 405, 'TL01-9004', 'PUT')
  expectError(t, await server.client.request('GET', '/v1/storage/bad/key', { tenant: 'acme' }), 400, 'TL01-1002', 'no token')
})

t.test('entries survive a restart (snapshot written at the clean stop)', async (t) => {
  await store('durable/k', ownerToken, 'still here', 'text/x-durable')
  await store('durable/p/public', bob.token, 'shared', 'text/plain')
  const dataDir = server.dataDir
  await server.stop()
  server = await startInProcess(dataDir)
  const afterRestart = await get('durable/k', ownerToken)
  t.equal(afterRestart.text, 'still here')
  t.equal(afterRestart.headers['content-type'], 'text/x-durable')
  t.equal((await get('durable/p/public', ownerToken)).text, 'shared')
  // Through a cluster (TIMELEDGER_TEST_CLUSTER=1) the tenant may be active on the other node than `service`.
  if (process.env.TIMELEDGER_TEST_CLUSTER !== '1') {
    const recovery = server.service.services.registry.get('acme')?.lastRecovery
    t.not(recovery?.snapshotFile, null, 'loaded from the snapshot written at the clean stop')
  }
  t.same((await get('durable', bob.token)).json, [{ itemKey: 'p', publicScope: true, contentType: 'text/plain' }])
})
